package localfed

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/internal/apiservice"
)

// kwokMetrics is what kwok simulates when members have metrics: the
// resource metrics endpoint and the containers' usage (see the file).
//
//go:embed kwok-metrics.yaml
var kwokMetrics []byte

const (
	binMetricsServer = "metrics-server"

	// resourceMetricsPathAnnotation tells metrics-server where a node's
	// resource metrics are; kwok serves each node's under its own path.
	resourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"

	// metricsServerNamespace and metricsServerService are where a member's
	// APIService v1beta1.metrics.k8s.io points, metrics-server's own names.
	metricsServerNamespace = "kube-system"
	metricsServerService   = "metrics-server"
)

// Annotations of the usage knobs (kwok-metrics.yaml). A pod's own
// annotation wins over its node's annotation for the pod's namespace.
const (
	// PodCPUUsageAnnotation and PodMemoryUsageAnnotation, on a pod, set
	// the usage of each of its containers (kwok's convention).
	PodCPUUsageAnnotation    = "kwok.x-k8s.io/usage-cpu"
	PodMemoryUsageAnnotation = "kwok.x-k8s.io/usage-memory"
	// NodeCPUUsageAnnotationPrefix and NodeMemoryUsageAnnotationPrefix,
	// followed by a namespace and set on a node, give the usage of each
	// container of that namespace's pods on the node.
	NodeCPUUsageAnnotationPrefix    = "cpu.usage.localfed.flotilla.io/"
	NodeMemoryUsageAnnotationPrefix = "memory.usage.localfed.flotilla.io/"
)

// metricsServerResolution is how often metrics-server scrapes kwok: its
// minimum, so that a changed usage shows within about 20 seconds (a rate
// needs two scrapes).
const metricsServerResolution = "10s"

// checkMetricsServerBinary fails, naming the make target, when the
// metrics-server binary is missing from the binary directory.
func checkMetricsServerBinary(dir string) error {
	info, err := os.Stat(filepath.Join(dir, binMetricsServer))
	if err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
		return nil
	}
	if err == nil {
		err = errors.New("not an executable file")
	} else if errors.Is(err, fs.ErrNotExist) {
		err = fs.ErrNotExist
	}
	return fmt.Errorf("%s missing from %s, needed by Options.Metrics (run `make k8s-binaries` to build it): %w", binMetricsServer, dir, err)
}

// startMetricsServer runs the member's metrics-server, scraping kwok's
// endpoint of every node over plain HTTP on loopback, and, the first time,
// registers it as the member's metrics.k8s.io. It serves with a
// certificate it makes in memory (no file for inotify to watch), so the
// APIService skips verifying it, as metrics-server's own manifests do.
func (f *Federation) startMetricsServer(ctx context.Context, c *Cluster, first bool) (*process, error) {
	if c.metricsServerPort == 0 {
		port, err := f.ports.next()
		if err != nil {
			return nil, err
		}
		c.metricsServerPort = port
	}
	if first {
		if err := c.writeComponentKubeconfigs(binMetricsServer); err != nil {
			return nil, err
		}
	}
	kubeconfig := c.componentKubeconfig(binMetricsServer)
	p, err := f.sup.start(ctx, processSpec{
		cluster:   c.Name,
		component: binMetricsServer,
		binary:    filepath.Join(f.BinDir, binMetricsServer),
		args: []string{
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(c.metricsServerPort),
			"--cert-dir=",
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--kubelet-port=" + strconv.Itoa(c.kwokPort),
			"--kubelet-preferred-address-types=" + string(corev1.NodeExternalIP),
			"--deprecated-kubelet-completely-insecure=true",
			"--metric-resolution=" + metricsServerResolution,
			// Below the resolution, as metrics-server requires; kwok is
			// on loopback.
			"--kubelet-request-timeout=5s",
		},
		tier: tierClient,
	})
	if err != nil {
		return nil, err
	}
	if !first {
		return p, nil
	}
	regCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		// A metrics-server that dies ends the registration's wait.
		select {
		case <-p.exited:
			stop()
		case <-regCtx.Done():
		}
	}()
	err = apiservice.Register(regCtx, c.Config, apiservice.Registration{
		ServiceName:           metricsServerService,
		Namespace:             metricsServerNamespace,
		ExternalName:          "127.0.0.1",
		Port:                  int32(c.metricsServerPort), //nolint:gosec // a port
		InsecureSkipTLSVerify: true,
		GroupVersions: []apiservice.GroupVersion{{
			Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100,
		}},
	})
	if err != nil {
		if p.hasExited() {
			err = errors.Join(err, p.exitError())
		}
		return nil, fmt.Errorf("registering %s's metrics-server: %w", c.Name, err)
	}
	log.FromContext(ctx).V(1).Info("metrics-server ready", "cluster", c.Name, "port", c.metricsServerPort)
	return p, nil
}

// metricsNodeFields adds to a node what metrics-server needs to reach
// kwok for it: an address on loopback and the path of its metrics.
func metricsNodeFields(n *corev1.Node) {
	n.Annotations[resourceMetricsPathAnnotation] = "/metrics/nodes/" + n.Name + "/metrics/resource"
	n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "127.0.0.1"})
}

// SetPodUsage sets the simulated usage of each container of the pods in
// namespace, in every running member, for the resources in usage (cpu,
// memory): it annotates every node, which kwok reads at each scrape, so
// running pods change usage without restarting and new pods get it too. A
// pod's own kwok.x-k8s.io/usage-* annotation still wins. A member stopped
// by StopMember is skipped and keeps the usage it had. It needs
// Options.Metrics.
func (f *Federation) SetPodUsage(ctx context.Context, namespace string, usage corev1.ResourceList) error {
	if !f.opts.Metrics {
		return errors.New("setting simulated usage: the federation was started without Options.Metrics")
	}
	if namespace == "" {
		return errors.New("setting simulated usage: namespace is empty")
	}
	annotations := map[string]any{}
	for name, q := range usage {
		switch name {
		case corev1.ResourceCPU:
			annotations[NodeCPUUsageAnnotationPrefix+namespace] = q.String()
		case corev1.ResourceMemory:
			annotations[NodeMemoryUsageAnnotationPrefix+namespace] = q.String()
		default:
			return fmt.Errorf("setting simulated usage: resource %q is not simulated (cpu and memory are)", name)
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("setting simulated usage: %w", err)
	}
	for _, m := range f.Members {
		if f.isStopped(m.Name) || f.opts.APIServerOnlyMembers {
			continue
		}
		var nodes corev1.NodeList
		if err := m.Client.List(ctx, &nodes, client.HasLabels{"type"}); err != nil {
			return fmt.Errorf("setting simulated usage: listing nodes of %s: %w", m.Name, err)
		}
		for i := range nodes.Items {
			if err := m.Client.Patch(ctx, &nodes.Items[i], client.RawPatch(types.MergePatchType, patch)); err != nil {
				return fmt.Errorf("setting simulated usage: annotating node %s of %s: %w", nodes.Items[i].Name, m.Name, err)
			}
		}
	}
	return nil
}

// isStopped reports whether StopMember stopped the member.
func (f *Federation) isStopped(name string) bool {
	f.membersMu.Lock()
	defer f.membersMu.Unlock()
	return f.stopped[name]
}
