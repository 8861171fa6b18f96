package workloadrebalancer_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/workloadrebalancer"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) {
	scheme, err := controllertest.NewScheme()
	if err == nil {
		err = appsv1alpha1.AddToScheme(scheme)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(controllertest.Main(m, &server, scheme))
}

// startController runs the controller in a manager of its own until the
// test ends.
func startController(t *testing.T) {
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		// The suites' scheme leaves out apps.karmada.io, which only this
		// controller reads.
		if err := appsv1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
			return err
		}
		return (&workloadrebalancer.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr)
	})
}

// resourceBinding is the binding of the Deployment name in default.
func resourceBinding(name string) *workv1alpha2.ResourceBinding {
	const ns = "default"
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Binding(name, "Deployment")},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
			Replicas: 2,
		},
	}
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := server.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// triggeredAt reads spec.rescheduleTriggeredAt of a binding.
func triggeredAt(ctx context.Context, obj client.Object) (*metav1.Time, error) {
	if err := server.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, err
	}
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return b.Spec.RescheduleTriggeredAt, nil
	case *workv1alpha2.ClusterResourceBinding:
		return b.Spec.RescheduleTriggeredAt, nil
	}
	return nil, fmt.Errorf("%T is not a binding", obj)
}

// waitStatus waits until the rebalancer reports want for generation, with
// a finish time, and returns it.
func waitStatus(t *testing.T, name string, generation int64, want []appsv1alpha1.ObservedWorkload) *appsv1alpha1.WorkloadRebalancer {
	t.Helper()
	got := &appsv1alpha1.WorkloadRebalancer{}
	controllertest.WaitFor(t, fmt.Sprintf("%s reports generation %d finished", name, generation), func(ctx context.Context) (bool, error) {
		if err := server.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false, err
		}
		if got.Status.ObservedGeneration != generation || got.Status.FinishTime == nil {
			return false, nil
		}
		if diff := cmp.Diff(want, got.Status.ObservedWorkloads); diff != "" {
			return false, fmt.Errorf("observedWorkloads (-want +got):\n%s", diff)
		}
		return true, nil
	})
	return got
}

// TestTriggersEachWorkloadOnce: the bindings of the listed workloads are
// asked to reschedule at the rebalancer's creation time (a later request
// is left alone), a workload without a binding fails, and a spec edit
// triggers the workloads added and keeps the result of one removed.
func TestTriggersEachWorkloadOnce(t *testing.T) {
	const ns = "default"
	web, api, later := resourceBinding("web"), resourceBinding("api"), resourceBinding("later")
	future := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	api.Spec.RescheduleTriggeredAt = &future
	role := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: names.Binding("system:reader", "ClusterRole")},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{
			APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:reader"}},
	}
	mustCreate(t, web, api, later, role)
	startController(t)

	roleRef := clusterRole("system:reader")
	rebalancer := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "triggers-once"},
		Spec: appsv1alpha1.WorkloadRebalancerSpec{Workloads: refs(
			deploy(ns, "web"), deploy(ns, "api"), deploy(ns, "missing"), roleRef)},
	}
	mustCreate(t, rebalancer)
	got := waitStatus(t, rebalancer.Name, 1, observed(
		succeeded(deploy(ns, "api")), notFound(deploy(ns, "missing")), succeeded(deploy(ns, "web")), succeeded(roleRef)))
	created := got.CreationTimestamp
	firstFinish := *got.Status.FinishTime

	for _, c := range []struct {
		binding client.Object
		want    metav1.Time
	}{{web, created}, {role, created}, {api, future}} {
		at, err := triggeredAt(t.Context(), c.binding)
		if err != nil {
			t.Fatal(err)
		}
		if at == nil || !at.Equal(&c.want) {
			t.Errorf("%s: rescheduleTriggeredAt %v, want %v", c.binding.GetName(), at, c.want)
		}
	}

	// web leaves the list, having been triggered; missing leaves it having
	// failed; later joins.
	got.Spec.Workloads = refs(deploy(ns, "api"), deploy(ns, "later"), roleRef)
	if err := server.Client.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	got = waitStatus(t, rebalancer.Name, 2, observed(
		succeeded(deploy(ns, "api")), succeeded(deploy(ns, "later")), succeeded(deploy(ns, "web")), succeeded(roleRef)))
	if got.Status.FinishTime.Before(&firstFinish) {
		t.Errorf("finishTime %v went back before the first finish %v", got.Status.FinishTime, firstFinish)
	}
	at, err := triggeredAt(t.Context(), later)
	if err != nil {
		t.Fatal(err)
	}
	if at == nil || !at.Equal(&created) {
		t.Errorf("later: rescheduleTriggeredAt %v, want the rebalancer's creation %v", at, created)
	}
}

// TestDeletedAfterTTL: a finished rebalancer with ttlSecondsAfterFinished
// goes once that time has passed; one without stays.
func TestDeletedAfterTTL(t *testing.T) {
	mustCreate(t, resourceBinding("ttl"))
	startController(t)
	withTTL := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "with-ttl"},
		Spec:       appsv1alpha1.WorkloadRebalancerSpec{Workloads: refs(deploy("default", "ttl")), TTLSecondsAfterFinished: ptr.To[int32](2)},
	}
	kept := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "without-ttl"},
		Spec:       appsv1alpha1.WorkloadRebalancerSpec{Workloads: refs(deploy("default", "ttl"))},
	}
	mustCreate(t, withTTL, kept)
	waitStatus(t, withTTL.Name, 1, observed(succeeded(deploy("default", "ttl"))))
	waitStatus(t, kept.Name, 1, observed(succeeded(deploy("default", "ttl"))))
	controllertest.WaitFor(t, withTTL.Name+" deleted after its TTL", func(ctx context.Context) (bool, error) {
		err := server.Client.Get(ctx, client.ObjectKeyFromObject(withTTL), &appsv1alpha1.WorkloadRebalancer{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// The one with a TTL is gone, so the controller has had its chance at
	// both; the one without must still be there.
	if err := server.Client.Get(t.Context(), client.ObjectKeyFromObject(kept), &appsv1alpha1.WorkloadRebalancer{}); err != nil {
		t.Errorf("%s without a TTL: %v", kept.Name, err)
	}
}
