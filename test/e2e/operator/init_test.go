package operator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// flotillactl runs the built flotillactl binary and returns its output;
// a non-zero exit fails the test.
func flotillactl(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, flotillactlBinary, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	t.Logf("flotillactl %s (%s):\n%s", strings.Join(args, " "), time.Since(began).Round(time.Second), out.String())
	if err != nil {
		t.Fatalf("flotillactl %s: %v", args[0], err)
	}
	return out.String()
}

// TestInitIntoHost: `flotillactl init` against the host cluster installs
// the operator's Helm chart — the operator then runs as a pod on the node
// agent, from its image — and a Karmada, waits with progress until it is
// Ready, and writes an admin kubeconfig that reaches the new API server at
// the NodePort on the advertised address. A member joined with `flotillactl
// join` receives a propagated Deployment. `flotillactl deinit --force`
// then removes the Karmada (the operator uninstalls its control plane),
// the operator's release and the namespace init made.
func TestInitIntoHost(t *testing.T) {
	ctx := context.Background()
	host := fed.Host.Client
	const ns, name = "flotilla-init", "fleet"
	dataDir := t.TempDir()
	// The node agent's pods share this machine's network: the operator
	// listens on its pod's IP, as the control plane's pods do.
	values := filepath.Join(dataDir, "operator-values.yaml")
	if err := os.WriteFile(values, []byte("podIPListeners: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := flotillactl(t, 12*time.Minute, "init", "--kubeconfig", fed.KubeconfigPath, "--context", "host",
		"-n", ns, "--name", name, "--etcd-storage-mode", "emptyDir", "-d", dataDir,
		"--karmada-apiserver-advertise-address", "127.0.0.1", "--wait-component-ready-timeout", "600", "--operator-values", values)
	for _, want := range []string{"Installed the operator: Helm release flotilla-operator in " + ns, "Created Karmada " + ns + "/" + name,
		"The operator is running", "waiting for Karmada " + ns + "/" + name + ": ", "Flotilla is ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output does not say %q", want)
		}
	}
	deinitDone := false
	t.Cleanup(func() {
		if !deinitDone {
			flotillactl(t, 6*time.Minute, "deinit", "--kubeconfig", fed.KubeconfigPath, "--context", "host", "-n", ns, "--name", name, "--force")
		}
	})

	// The operator is the chart's Deployment, its pod run by the node
	// agent from the operator's image.
	pods := &corev1.PodList{}
	if err := host.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "flotilla-operator"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != agent.NodeName() || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("operator pods: %+v", pods.Items)
	}

	// The kubeconfig init wrote reaches the API server at its NodePort on
	// 127.0.0.1, with the operator's CA and the admin's certificate.
	path := filepath.Join(dataDir, "karmada-apiserver.config")
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.Host, "https://127.0.0.1:") || len(cfg.CAData) == 0 {
		t.Fatalf("kubeconfig %s: server %s", path, cfg.Host)
	}
	cp, err := client.New(cfg, client.Options{Scheme: controlPlaneScheme(t)})
	if err != nil {
		t.Fatal(err)
	}

	flotillactl(t, 3*time.Minute, "join", "member1", "--kubeconfig", path, "--cluster-kubeconfig", fed.KubeconfigPath, "--cluster-context", "member1")
	poll(t, 2*time.Minute, "member1 Ready", func(ctx context.Context) (bool, error) {
		c := &clusterv1alpha1.Cluster{}
		if err := cp.Get(ctx, client.ObjectKey{Name: "member1"}, c); err != nil {
			return false, err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == clusterv1alpha1.ClusterConditionReady && cond.Status == metav1.ConditionTrue {
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions %+v", c.Status.Conditions)
	})

	// A name of its own: the other tests propagate "web" to member1.
	d := nginx(2)
	d.Name = "init-web"
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "init-web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	for _, obj := range []client.Object{d, policy} {
		if err := cp.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	member := fed.Member("member1").Client
	t.Cleanup(func() {
		_ = member.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: d.Name}})
	})
	poll(t, 2*time.Minute, "Deployment init-web in member1", func(ctx context.Context) (bool, error) {
		got := &appsv1.Deployment{}
		if err := member.Get(ctx, client.ObjectKey{Namespace: "default", Name: d.Name}, got); err != nil {
			return false, err
		}
		return ptr.Deref(got.Spec.Replicas, 1) == 2, fmt.Errorf("replicas %d", ptr.Deref(got.Spec.Replicas, 1))
	})
	// No unjoin: the federation's own registration of member1, which the
	// other tests use, is the ServiceAccount and token join found there
	// and reused, and unjoin would delete them.

	out = flotillactl(t, 6*time.Minute, "deinit", "--kubeconfig", fed.KubeconfigPath, "--context", "host", "-n", ns, "--name", name, "--force")
	deinitDone = true
	for _, want := range []string{"Removed Karmada " + ns + "/" + name, "Uninstalled the operator", "Flotilla is removed"} {
		if !strings.Contains(out, want) {
			t.Errorf("deinit's output does not say %q", want)
		}
	}
	k := &operatorv1alpha1.Karmada{}
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, k); !apierrors.IsNotFound(err) {
		t.Errorf("the Karmada after deinit: %v", err)
	}
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flotilla-operator"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-apiserver"}},
	} {
		if err := host.Get(ctx, client.ObjectKeyFromObject(obj), obj); err == nil && obj.GetDeletionTimestamp() == nil {
			t.Errorf("Deployment %s is still there after deinit", obj.GetName())
		}
	}
	poll(t, 2*time.Minute, "namespace "+ns+" gone", func(ctx context.Context) (bool, error) {
		n := &corev1.Namespace{}
		err := host.Get(ctx, client.ObjectKey{Name: ns}, n)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("namespace: %v, phase %s", err, n.Status.Phase)
	})
}
