package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// controlPlane is a real API server with Flotilla's CRDs; kubeconfigPath
// reaches it as an administrator.
var (
	controlPlane   client.Client
	kubeconfigPath string
)

func TestMain(m *testing.M) {
	os.Exit(runWithControlPlane(m))
}

func runWithControlPlane(m *testing.M) int {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "flotillactl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if controlPlane, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// flotillactl runs the command line args against the control plane and
// returns what it printed.
func flotillactl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfigPath))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func newCluster(t *testing.T, name string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443", Taints: taints},
	}
	if err := controlPlane.Create(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = controlPlane.Delete(context.Background(), c) })
}

func taintsOf(t *testing.T, name string) string {
	t.Helper()
	var c clusterv1alpha1.Cluster
	if err := controlPlane.Get(t.Context(), client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatal(err)
	}
	parts := make([]string, len(c.Spec.Taints))
	for i, taint := range c.Spec.Taints {
		parts[i] = taint.ToString()
	}
	return strings.Join(parts, ",")
}

// step is one command and what it must print (or the error it must give)
// and leave in the Cluster's taints.
type step struct {
	args   []string
	output string
	err    string
	taints string
}

func runSteps(t *testing.T, cluster string, steps []step) {
	t.Helper()
	for _, s := range steps {
		out, err := flotillactl(t, s.args...)
		switch {
		case s.err != "" && (err == nil || !strings.Contains(err.Error(), s.err)):
			t.Fatalf("flotillactl %s: error %v, want one with %q", strings.Join(s.args, " "), err, s.err)
		case s.err == "" && err != nil:
			t.Fatalf("flotillactl %s: %v", strings.Join(s.args, " "), err)
		case s.err == "" && out != s.output:
			t.Fatalf("flotillactl %s printed %q, want %q", strings.Join(s.args, " "), out, s.output)
		}
		if got := taintsOf(t, cluster); got != s.taints {
			t.Fatalf("after flotillactl %s: taints %q, want %q", strings.Join(s.args, " "), got, s.taints)
		}
	}
}

func TestCordon(t *testing.T) {
	newCluster(t, "cordoned", nil, corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule})
	const team, cordon = "team=a:NoSchedule", "cluster.karmada.io/unschedulable:NoSchedule"
	runSteps(t, "cordoned", []step{
		{args: []string{"cordon", "cordoned", "--dry-run=client"}, output: "cluster/cordoned cordoned (client dry run)\n", taints: team},
		{args: []string{"cordon", "cordoned", "--dry-run=server"}, output: "cluster/cordoned cordoned (server dry run)\n", taints: team},
		{args: []string{"cordon", "cordoned"}, output: "cluster/cordoned cordoned\n", taints: team + "," + cordon},
		{args: []string{"cordon", "cordoned"}, output: "cluster/cordoned already cordoned\n", taints: team + "," + cordon},
		{args: []string{"uncordon", "cordoned"}, output: "cluster/cordoned uncordoned\n", taints: team},
		{args: []string{"uncordon", "cordoned"}, output: "cluster/cordoned already uncordoned\n", taints: team},
		{args: []string{"cordon", "missing"}, err: `cluster "missing" not found`, taints: team},
		{args: []string{"cordon", "cordoned", "--dry-run=maybe"}, err: "--dry-run", taints: team},
	})
}

func TestTaint(t *testing.T) {
	newCluster(t, "tainted", map[string]string{"env": "staging"})
	newCluster(t, "other", map[string]string{"env": "staging"})
	runSteps(t, "tainted", []step{
		{args: []string{"taint", "clusters", "tainted", "dedicated=ml:NoSchedule"}, output: "cluster/tainted tainted\n", taints: "dedicated=ml:NoSchedule"},
		{args: []string{"taint", "clusters", "tainted", "dedicated=gpu:NoSchedule"}, err: "already exists and --overwrite is false", taints: "dedicated=ml:NoSchedule"},
		{args: []string{"taint", "clusters", "tainted", "dedicated=gpu:NoSchedule", "--overwrite"}, output: "cluster/tainted tainted\n", taints: "dedicated=gpu:NoSchedule"},
		{args: []string{"taint", "cluster", "tainted", "dedicated-", "maintenance:NoExecute"}, output: "cluster/tainted modified\n", taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "tainted", "dedicated:NoSchedule-"}, err: `taint "dedicated:NoSchedule" not found`, taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "tainted", "bad key:NoSchedule"}, err: `key "bad key"`, taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "tainted", "k=v:Sometimes"}, err: `effect "Sometimes"`, taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "tainted", "k=v"}, err: "an effect is required", taints: "maintenance:NoExecute"},
		{args: []string{"taint", "nodes", "tainted", "k=v:NoSchedule"}, err: "only clusters", taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "-l", "env=staging", "maintenance:NoExecute", "--overwrite"}, output: "cluster/other tainted\ncluster/tainted tainted\n", taints: "maintenance:NoExecute"},
		{args: []string{"taint", "clusters", "--all", "maintenance-"}, output: "cluster/other untainted\ncluster/tainted untainted\n", taints: ""},
	})
}

// TestTaintBySelectorStopsAtTheFirstRefusal: with a selector, a cluster
// that refuses the change (here: nothing to remove) is named in the error.
func TestTaintBySelectorStopsAtTheFirstRefusal(t *testing.T) {
	newCluster(t, "sel-a", map[string]string{"pool": "x"})
	_, err := flotillactl(t, "taint", "clusters", "-l", "pool=x", "absent:NoSchedule-")
	if err == nil || !strings.Contains(err.Error(), "cluster sel-a") {
		t.Fatalf("error %v, want one naming cluster sel-a", err)
	}
	if _, err := flotillactl(t, "taint", "clusters", "-l", "pool=none", "k:NoSchedule"); err == nil || !strings.Contains(err.Error(), "no cluster matches") {
		t.Fatalf("error %v, want no cluster matches", err)
	}
}
