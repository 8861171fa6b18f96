package localfed

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kwokStages is kwok's configuration: the stages it plays on nodes and pods.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

const (
	// kwokNodeAnnotation marks the nodes kwok manages, the convention of kwok's
	// own documentation.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"

	// kwokPodCIDR is where kwok takes pod IPs from. They are only strings in
	// pod status: nothing listens on them.
	kwokPodCIDR = "10.244.0.0/16"
)

// startKwok runs kwok against a member's API server, managing the nodes that
// carry kwokNodeAnnotation.
func (f *Federation) startKwok(ctx context.Context, c *Cluster) (*process, error) {
	stagesPath := filepath.Join(c.dir, "kwok-stages.yaml")
	config := append(append(append([]byte{}, kwokStages...), "\n---\n"...), c.kwokStreamingConfig()...)
	if f.opts.Metrics {
		config = append(append(config, "\n---\n"...), kwokMetrics...)
	}
	if err := os.WriteFile(stagesPath, config, 0o644); err != nil {
		return nil, fmt.Errorf("writing kwok stages: %w", err)
	}
	return f.sup.start(ctx, processSpec{
		cluster:   c.Name,
		component: binKwok,
		binary:    filepath.Join(f.BinDir, binKwok),
		args: []string{
			"--kubeconfig=" + c.componentKubeconfig(binKwok),
			"--config=" + stagesPath,
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=" + kwokNodeValue,
			"--cidr=" + kwokPodCIDR,
			// kwok renews a Lease per node, as a kubelet does; without one the
			// Ready condition would have to be rewritten every few seconds.
			"--node-lease-duration-seconds=40",
			// The kubelet side (kwokkubelet.go): metrics, logs, exec and
			// attach, TLS with the member's CA; kwok answers plain HTTP on
			// the same port too, which metrics-server scrapes.
			"--server-address=127.0.0.1:" + strconv.Itoa(c.kwokPort),
			"--tls-cert-file=" + c.path(fileKwokServingCert),
			"--tls-private-key-file=" + c.path(fileKwokServingKey),
		},
		// kwok reads ~/.kwok/kwok.yaml when it exists; a home of its own keeps
		// a user's kwok settings out of the federation.
		env:  []string{"HOME=" + c.dir},
		tier: tierClient,
	})
}

// createNodes registers the member's fake nodes; kwok makes them Ready.
func (f *Federation) createNodes(ctx context.Context, c *Cluster) error {
	for i := 1; i <= f.opts.Nodes.Count; i++ {
		if err := c.Client.Create(ctx, f.node(c, i)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %d in %s: %w", i, c.Name, err)
		}
	}
	return nil
}

func (f *Federation) node(c *Cluster, i int) *corev1.Node {
	name := fmt.Sprintf("%s-node%d", c.Name, i)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    f.opts.Nodes.CPU,
		corev1.ResourceMemory: f.opts.Nodes.Memory,
		corev1.ResourcePods:   f.opts.Nodes.Pods,
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				"type":                 "kwok",
			},
			Annotations: map[string]string{
				kwokNodeAnnotation: kwokNodeValue,
				// The TTL controller would otherwise annotate every node.
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		// The API server keeps a Node's status on create, as a kubelet
		// registering itself relies on; kwok's stages leave these fields be.
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources,
			Addresses: []corev1.NodeAddress{
				// Every node is kwok on loopback: the member's API server
				// reaches each node's "kubelet" (logs, exec, attach) there.
				{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{
				KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(c.kwokPort)}, //nolint:gosec // a port
			},
		},
	}
	if f.opts.Metrics {
		metricsNodeFields(n)
	}
	return n
}

// nodesReady reports whether every node of the member is Ready.
func (f *Federation) nodesReady(c *Cluster) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := c.Client.List(ctx, &nodes, client.HasLabels{"type"}); err != nil {
			return false, err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= f.opts.Nodes.Count, nil
	}
}
