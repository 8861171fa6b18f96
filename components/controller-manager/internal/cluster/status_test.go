package cluster_test

import (
	"context"
	"net"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/internal/clusterstatus"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// startWithStatus runs the cluster and cluster-status controllers, as the
// controller-manager does: both write the Cluster's status.
func startWithStatus(t *testing.T) (*localfed.Federation, *controllertest.Env) {
	t.Helper()
	f := fed.Get(t)
	e := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		err := (&cluster.Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder(cluster.ControllerName),
			Members:   e.Members,
			Informers: e.Informers,
			Health:    cluster.HealthOptions{Period: 500 * time.Millisecond, FailureThreshold: 2},
		}).SetupWithManager(mgr)
		if err != nil {
			return err
		}
		return (&clusterstatus.Reconciler{
			Client:    mgr.GetClient(),
			Members:   e.Members,
			Informers: e.Informers,
			Period:    500 * time.Millisecond,
		}).SetupWithManager(mgr)
	})
	return f, e
}

// TestStatusKeepsBothConditions: the cluster controller's Ready and the
// cluster-status controller's CompleteAPIEnablements both survive the other
// controller's writes.
func TestStatusKeepsBothConditions(t *testing.T) {
	f, e := startWithStatus(t)
	name := f.Members[0].Name
	controllertest.WaitFor(t, "status collected, Ready and CompleteAPIEnablements both True", func(ctx context.Context) (bool, error) {
		got, err := getCluster(ctx, e.Client, name)
		if err != nil {
			return false, err
		}
		return got.Status.KubernetesVersion != "" &&
			meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady) &&
			meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements), nil
	})
}

// TestUnreachableMemberIsNotCollected registers a Cluster nothing answers
// for: it becomes not ready, and no informer keeps dialling it.
func TestUnreachableMemberIsNotCollected(t *testing.T) {
	f, e := startWithStatus(t)
	member := f.Members[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	obj := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "nowhere"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://" + addr,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: localfed.NamespaceCluster, Name: member.Name},
		},
	}
	if err := e.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Client.Delete(context.Background(), obj)
		controllertest.WaitFor(t, "Cluster nowhere gone", func(ctx context.Context) (bool, error) {
			_, err := getCluster(ctx, e.Client, obj.Name)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})

	controllertest.WaitFor(t, "nowhere not ready", func(ctx context.Context) (bool, error) {
		got, err := getCluster(ctx, e.Client, obj.Name)
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == clusterv1alpha1.ClusterReasonNotReachable, nil
	})
	controllertest.WaitFor(t, "no informer left for nowhere", func(context.Context) (bool, error) {
		return len(e.Informers.Running(obj.Name)) == 0, nil
	})
	got, err := getCluster(t.Context(), e.Client, obj.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.KubernetesVersion != "" || got.Status.NodeSummary != nil {
		t.Errorf("status of an unreachable member = %+v, want nothing collected", got.Status)
	}
}
