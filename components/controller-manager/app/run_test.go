package app

import (
	"context"
	"flag"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/testlog"
)

// TestRun runs the controller-manager as main wires it on a federation of
// one member and checks that each controller did its part.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	f := localfedtest.Start(t, localfed.Options{Members: 1, Nodes: localfed.NodeOptions{Count: 1}, StartTimeout: 5 * time.Minute})
	member := f.Members[0]

	var opts Options
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-status-update-frequency=500ms", "--cluster-health-probe-period=500ms",
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, f.ControlPlane.Config, opts, testlog.New(t)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	cl, err := client.New(f.ControlPlane.Config, client.Options{Scheme: controllertest.Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "member Ready with its status and execution namespace", func(ctx context.Context) (bool, error) {
		var c clusterv1alpha1.Cluster
		if err := cl.Get(ctx, client.ObjectKey{Name: member.Name}, &c); err != nil {
			return false, err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) ||
			c.Status.KubernetesVersion == "" || c.Status.NodeSummary == nil || c.Status.NodeSummary.ReadyNum != 1 {
			return false, nil
		}
		err := cl.Get(ctx, client.ObjectKey{Name: names.ExecutionSpace(member.Name)}, &corev1.Namespace{})
		return err == nil, client.IgnoreNotFound(err)
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wired"}}
	if err := cl.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "namespace propagated", func(ctx context.Context) (bool, error) {
		err := member.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
		return err == nil, client.IgnoreNotFound(err)
	})
}
