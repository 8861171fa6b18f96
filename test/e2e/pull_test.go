package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// TestMixedFederation runs a federation of its own, one Push and one Pull
// member, with a controller-manager whose lease grace is short: a
// Deployment reaches both members and its status comes back from both; the
// Pull member's agent stopping makes the member Unknown and tainted
// unreachable through its lease, and starting it again makes it Ready.
func TestMixedFederation(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{
		Members: 1, PullMembers: 1, Nodes: localfed.NodeOptions{Count: 1}, StartTimeout: 5 * time.Minute,
		AgentArgs: []string{"--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s"},
	})
	push, pull := f.Members[0].Name, f.Members[1].Name
	c := mixedClient(t, f)
	runComponents(t, f, "--cluster-monitor-grace-period=4s", "--cluster-health-probe-period=1s", "--cluster-status-update-frequency=1s")
	for _, m := range []string{push, pull} {
		clusterHealthIs(t, c, m, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
	}

	ns := "default"
	d := deployment(ns, "mixed", 2, "nginx")
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	pp := propagationPolicy(ns, "mixed", []string{push, pull}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name})
	if err := c.Create(t.Context(), pp); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{push, pull} {
		member := f.Member(m)
		pollFor(t, "Deployment available in "+m, func(ctx context.Context) (bool, error) {
			var got appsv1.Deployment
			if err := member.Client.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return got.Status.AvailableReplicas == 2, nil
		})
	}
	pollFor(t, "template status aggregated from both members", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 4, nil
	})

	if err := f.StopAgent(t.Context(), pull); err != nil {
		t.Fatal(err)
	}
	clusterHealthIs(t, c, pull, metav1.ConditionUnknown, clusterv1alpha1.ClusterReasonStatusUnknown,
		[]string{clusterv1alpha1.TaintClusterUnreachable + ":NoSchedule"})
	if err := f.StartAgent(t.Context(), pull); err != nil {
		t.Fatal(err)
	}
	clusterHealthIs(t, c, pull, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
	clusterHealthIs(t, c, push, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
}

// mixedClient is a client of f's control plane that knows Flotilla's types.
func mixedClient(t *testing.T, f *localfed.Federation) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runComponents runs a controller-manager (with cmArgs) and a scheduler
// against f until the test ends.
func runComponents(t *testing.T, f *localfed.Federation, cmArgs ...string) {
	t.Helper()
	cm, err := cmapp.ParseOptions(append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}, cmArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	// The suite's own controller-manager runs in this process too.
	cm.Restartable = true
	sched, err := schedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		t.Fatal(err)
	}
	logger := log.FromContext(t.Context())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- cmapp.Run(ctx, f.ControlPlane.Config, cm, logger.WithName("mixed-controller-manager")) }()
	go func() { done <- schedapp.Run(ctx, f.ControlPlane.Config, sched, logger.WithName("mixed-scheduler")) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("component of the mixed federation: %v", err)
			}
		}
	})
}

// clusterHealthIs waits until the Cluster's Ready condition and health
// taints are as given.
func clusterHealthIs(t *testing.T, c client.Client, name string, status metav1.ConditionStatus, reason string, taints []string) {
	t.Helper()
	pollFor(t, "Cluster "+name+" "+string(status)+"/"+reason, func(ctx context.Context) (bool, error) {
		var got clusterv1alpha1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return cond != nil && cond.Status == status && cond.Reason == reason && slices.Equal(healthTaints(&got), taints), nil
	})
}

// pollFor waits for cond, failing the test after two minutes.
func pollFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}
