package taintmanager_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/taintmanager"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func binding(name string, tolerations ...corev1.Toleration) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
			Replicas:  4,
			Placement: &policyv1alpha1.Placement{ClusterTolerations: tolerations},
			Clusters:  []workv1alpha2.TargetCluster{{Name: "tm-tainted", Replicas: 2}, {Name: "tm-healthy", Replicas: 2}},
		},
	}
}

// TestEvictsWhatDoesNotTolerate: on a cluster tainted NoExecute, a binding
// without a toleration is evicted at once into a graceful eviction task, one
// tolerating the taint for a while is evicted when that runs out, and one
// tolerating it for good stays.
func TestEvictsWhatDoesNotTolerate(t *testing.T) {
	c := server.Client
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&taintmanager.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(taintmanager.ControllerName),
			Graceful: true, RetryPeriod: time.Second}).SetupWithManager(mgr)
	})
	key := clusterv1alpha1.TaintClusterNotReady
	bindings := []*workv1alpha2.ResourceBinding{
		binding("untolerated"),
		binding("for-a-while", corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)}),
		binding("for-good", corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}),
	}
	for _, b := range bindings {
		if err := c.Create(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "tm-tainted"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1",
			Taints: []corev1.Taint{{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now}}}}
	if err := c.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}

	evicted := func(name string) {
		t.Helper()
		controllertest.WaitFor(t, name+" evicted from tm-tainted", func(ctx context.Context) (bool, error) {
			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb); err != nil {
				return false, err
			}
			if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "tm-healthy" || len(rb.Spec.GracefulEvictionTasks) != 1 {
				return false, nil
			}
			task := rb.Spec.GracefulEvictionTasks[0]
			if task.FromCluster != "tm-tainted" || task.Producer != workv1alpha2.EvictionProducerTaintManager ||
				task.Reason != workv1alpha2.EvictionReasonTaintUntolerated || task.Replicas == nil || *task.Replicas != 2 ||
				task.PurgeMode != policyv1alpha1.PurgeModeGracefully {
				return false, fmt.Errorf("task %+v", task)
			}
			return true, nil
		})
	}
	evicted("untolerated")
	evicted("for-a-while")
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "for-good"}, rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Clusters) != 2 || len(rb.Spec.GracefulEvictionTasks) != 0 {
		t.Errorf("the binding tolerating the taint for good was touched: %+v", rb.Spec)
	}
}
