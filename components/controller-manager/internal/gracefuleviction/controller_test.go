package gracefuleviction_test

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/gracefuleviction"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

// evicting creates a binding scheduled to m2 and being evicted from m1,
// with the scheduler's status for its generation and m2's health.
func evicting(t *testing.T, c client.Client, name string, purge policyv1alpha1.PurgeMode, health workv1alpha2.ResourceHealth) {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
			Replicas: 2,
			Clusters: []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 2}},
			GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{FromCluster: "m1", PurgeMode: purge,
				Reason: workv1alpha2.EvictionReasonTaintUntolerated, Producer: workv1alpha2.EvictionProducerTaintManager}},
		},
	}
	if err := c.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	rb.Status.SchedulerObservedGeneration = rb.Generation
	rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "m2", Applied: true, Health: health}}
	if err := c.Status().Update(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
}

func tasks(ctx context.Context, c client.Client, name string) ([]workv1alpha2.GracefulEvictionTask, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb); err != nil {
		return nil, err
	}
	return rb.Spec.GracefulEvictionTasks, nil
}

// TestTasksEnd: a task ends once the replacement is healthy, with an
// EvictWorkloadFromClusterSucceed event; a task whose replacement is not
// healthy stays, stamped with its creation time.
func TestTasksEnd(t *testing.T) {
	c := server.Client
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&gracefuleviction.Reconciler{Client: mgr.GetClient(),
			Recorder: mgr.GetEventRecorder(gracefuleviction.ResourceBindingControllerName)}).SetupWithManager(mgr)
	})
	evicting(t, c, "healthy", policyv1alpha1.PurgeModeGracefully, workv1alpha2.ResourceHealthy)
	evicting(t, c, "starting", policyv1alpha1.PurgeModeGracefully, workv1alpha2.ResourceUnhealthy)
	const name = "healthy"
	controllertest.WaitFor(t, "the task of "+name+" ended", func(ctx context.Context) (bool, error) {
		ts, err := tasks(ctx, c, name)
		return err == nil && len(ts) == 0, err
	})
	controllertest.WaitFor(t, "an eviction event on "+name, func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "ResourceBinding" &&
				e.Reason == flotillaevents.ReasonEvictWorkloadSucceed && e.Message == "Evict from cluster m1 succeed." {
				return true, nil
			}
		}
		return false, nil
	})
	controllertest.WaitFor(t, "the task of starting stamped", func(ctx context.Context) (bool, error) {
		ts, err := tasks(ctx, c, "starting")
		return err == nil && len(ts) == 1 && ts[0].CreationTimestamp != nil, err
	})
}
