package bindingstatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

func ref(o client.Object, apiVersion, kind string) workv1alpha2.ObjectReference {
	return workv1alpha2.ObjectReference{
		APIVersion: apiVersion, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(),
		UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
	}
}

// scheduledBinding creates a ResourceBinding scheduled to clusters.
func scheduledBinding(t *testing.T, resource workv1alpha2.ObjectReference, replicas int32, clusters ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: resource.Namespace,
			Name:      names.Binding(resource.Name, resource.Kind),
			Labels:    map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + resource.Namespace + "-" + resource.Name},
		},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: resource, Replicas: replicas, Clusters: clusters},
	}
	if err := apiClient.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

// waitStatus waits until the binding's status satisfies check.
func waitStatus(t *testing.T, obj client.Object, status func() *workv1alpha2.ResourceBindingStatus, what string, check func(*workv1alpha2.ResourceBindingStatus) (bool, error)) {
	t.Helper()
	waitFor(t, fmt.Sprintf("status of %s: %s", obj.GetName(), what), func(ctx context.Context) (bool, error) {
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		return check(status())
	})
}

// fullyApplied checks the FullyApplied condition.
func fullyApplied(want metav1.ConditionStatus, messagePart string) func(*workv1alpha2.ResourceBindingStatus) (bool, error) {
	return func(s *workv1alpha2.ResourceBindingStatus) (bool, error) {
		c := meta.FindStatusCondition(s.Conditions, workv1alpha2.FullyApplied)
		if c == nil {
			return false, fmt.Errorf("no FullyApplied condition")
		}
		if c.Status != want || !strings.Contains(c.Message, messagePart) {
			return false, fmt.Errorf("FullyApplied %s: %s", c.Status, c.Message)
		}
		return true, nil
	}
}

func workloadStatus(replicas, ready, generation int64) map[string]any {
	return map[string]any{
		"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready, "updatedReplicas": replicas,
		"observedGeneration": 1, "generation": 1, "resourceTemplateGeneration": generation,
	}
}

func hasEvent(t *testing.T, objName, reason string) {
	t.Helper()
	waitFor(t, "event "+reason+" on "+objName, func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, apiClient, objName, reason)
	})
}

// A Deployment applied in two members: the binding reports each cluster
// and FullyApplied, and the template shows the replicas summed.
func TestDeploymentStatusAggregated(t *testing.T) {
	start(t, 2, everyStep)
	ns := namespace(t, "aggregate")
	labels := map[string]string{"app": "nginx"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nginx"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
	if err := apiClient.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	rb := scheduledBinding(t, ref(d, "apps/v1", "Deployment"), 3,
		workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 1})
	status := func() *workv1alpha2.ResourceBindingStatus { return &rb.Status }

	waitStatus(t, rb, status, "no Work yet", fullyApplied(metav1.ConditionFalse, "member1 (Work not created yet)"))
	v := binding.ViewOf(rb)
	k1, k2 := createWork(t, v, "member1"), createWork(t, v, "member2")
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	reportApplied(t, k1, gvk, "deployments", workloadStatus(2, 2, d.Generation))
	waitStatus(t, rb, status, "member2 not applied", fullyApplied(metav1.ConditionFalse, "Not applied in 1 of 2 clusters: member2"))

	reportApplied(t, k2, gvk, "deployments", workloadStatus(1, 1, d.Generation))
	waitStatus(t, rb, status, "fully applied", fullyApplied(metav1.ConditionTrue, "All works"))
	waitStatus(t, rb, status, "both clusters healthy with status", func(s *workv1alpha2.ResourceBindingStatus) (bool, error) {
		if len(s.AggregatedStatus) != 2 {
			return false, fmt.Errorf("%d items", len(s.AggregatedStatus))
		}
		for i, want := range []struct {
			cluster string
			ready   float64
		}{{"member1", 2}, {"member2", 1}} {
			it := s.AggregatedStatus[i]
			var st map[string]any
			if it.Status == nil || json.Unmarshal(it.Status.Raw, &st) != nil {
				return false, fmt.Errorf("item %d has no status", i)
			}
			if it.ClusterName != want.cluster || !it.Applied || it.Health != workv1alpha2.ResourceHealthy || st["readyReplicas"] != want.ready {
				return false, fmt.Errorf("item %d: %s applied=%v health=%s status=%v", i, it.ClusterName, it.Applied, it.Health, st)
			}
		}
		return true, nil
	})

	waitFor(t, "the template shows 3 ready replicas", func(ctx context.Context) (bool, error) {
		got := &appsv1.Deployment{}
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return false, err
		}
		s := got.Status
		if s.ReadyReplicas != 3 || s.Replicas != 3 || s.ObservedGeneration != got.Generation {
			return false, fmt.Errorf("template status %+v", s)
		}
		return true, nil
	})
	hasEvent(t, rb.Name, "AggregateStatusSucceed")
	hasEvent(t, d.Name, "AggregateStatusSucceed")
}

// A custom resource without a status subresource gets its status written
// with the object, once: a Work change that leaves the aggregate as it is
// writes nothing.
func TestStatusWithoutSubresource(t *testing.T) {
	// One worker: bindings are reconciled in the order their events come.
	start(t, 1, everyStep)
	ns := namespace(t, "nosubresource")
	cs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"namespace": ns, "name": "web"},
		"spec":     map[string]any{"replicas": int64(4)},
	}}
	if err := apiClient.Create(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	rb := scheduledBinding(t, ref(cs, "apps.kruise.io/v1alpha1", "CloneSet"), 4,
		workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 2})
	v := binding.ViewOf(rb)
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	k1 := createWork(t, v, "member1")
	reportApplied(t, k1, gvk, "clonesets", workloadStatus(2, 2, cs.GetGeneration()))
	reportApplied(t, createWork(t, v, "member2"), gvk, "clonesets", workloadStatus(2, 1, cs.GetGeneration()))

	waitFor(t, "the CloneSet shows 3 ready replicas", func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(cs), got); err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas")
		if ready != 3 {
			return false, fmt.Errorf("status %v", got.Object["status"])
		}
		cs = got
		return true, nil
	})

	// Touch member1's Work status without changing what is aggregated, then
	// schedule another binding: once that one has a status, this one's
	// reconcile has run.
	waitFor(t, "touching member1's Work status", func(ctx context.Context) (bool, error) {
		w := &workv1alpha1.Work{}
		if err := apiClient.Get(ctx, k1, w); err != nil {
			return false, err
		}
		w.Status.Conditions[0].Message = "touched"
		return true, apiClient.Status().Update(ctx, w)
	})
	other := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"namespace": ns, "name": "other"},
	}}
	if err := apiClient.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	otherRB := scheduledBinding(t, ref(other, "apps.kruise.io/v1alpha1", "CloneSet"), 0, workv1alpha2.TargetCluster{Name: "member1"})
	waitStatus(t, otherRB, func() *workv1alpha2.ResourceBindingStatus { return &otherRB.Status }, "reported",
		fullyApplied(metav1.ConditionFalse, "member1"))
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	if err := apiClient.Get(t.Context(), client.ObjectKeyFromObject(cs), got); err != nil {
		t.Fatal(err)
	}
	if got.GetResourceVersion() != cs.GetResourceVersion() {
		t.Errorf("the CloneSet was written again (resourceVersion %s -> %s): status %v", cs.GetResourceVersion(), got.GetResourceVersion(), got.Object["status"])
	}
}

// A ClusterResourceBinding reports like a ResourceBinding; a Work of the
// same name that belongs to another binding does not count.
func TestClusterResourceBindingStatus(t *testing.T) {
	start(t, 2, everyStep)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flotilla:" + unique("status-test")}}
	if err := apiClient.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:   names.Binding(role.Name, "ClusterRole"),
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-id"},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: ref(role, "rbac.authorization.k8s.io/v1", "ClusterRole"),
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}},
		},
	}
	if err := apiClient.Create(t.Context(), crb); err != nil {
		t.Fatal(err)
	}
	status := func() *workv1alpha2.ResourceBindingStatus { return &crb.Status }
	v := binding.ClusterViewOf(crb)
	gvk := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	reportApplied(t, createWork(t, v, "member1"), gvk, "clusterroles", map[string]any{})

	// member2's Work of that name belongs to some other binding.
	other := binding.ClusterViewOf(&workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "other-id"}},
		Spec:       crb.Spec,
	})
	reportApplied(t, createWork(t, other, "member2"), gvk, "clusterroles", map[string]any{})
	waitStatus(t, crb, status, "member2's Work is not its own", fullyApplied(metav1.ConditionFalse, "member2 (Work not created yet)"))
	waitStatus(t, crb, status, "member1 applied", func(s *workv1alpha2.ResourceBindingStatus) (bool, error) {
		return len(s.AggregatedStatus) == 2 && s.AggregatedStatus[0].Applied, nil
	})
}

// everyStep makes the controller write each step of a new binding's way
// out, for the tests that follow those steps.
const everyStep = -1

// TestFirstStatusWhenWorksReport checks that a new binding's status is
// first written once its Works have reported, not at each step before: no
// version of the binding says "not created yet" or "not applied yet" when
// everything arrives within the grace period.
func TestFirstStatusWhenWorksReport(t *testing.T) {
	start(t, 2, 0)
	ns := namespace(t, "first-report")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	if err := apiClient.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(apiConfig, client.Options{Scheme: apiClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := wc.Watch(t.Context(), &workv1alpha2.ResourceBindingList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()

	rb := scheduledBinding(t, ref(cm, "v1", "ConfigMap"), 0, workv1alpha2.TargetCluster{Name: "member1"}, workv1alpha2.TargetCluster{Name: "member2"})
	v := binding.ViewOf(rb)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	k1 := createWork(t, v, "member1")
	// Long enough for the controller to look at the binding and its one
	// unreported Work a few times (it waits a second after each change):
	// writing every step would show here. The outcome does not depend on
	// how long this is, as long as it is within the grace period.
	time.Sleep(3 * time.Second)
	reportApplied(t, k1, gvk, "configmaps", map[string]any{})
	reportApplied(t, createWork(t, v, "member2"), gvk, "configmaps", map[string]any{})

	for {
		select {
		case <-t.Context().Done():
			t.Fatal("test ended before the binding's status was written")
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatal("watch closed before the binding's status was written")
			}
			got, isBinding := ev.Object.(*workv1alpha2.ResourceBinding)
			if !isBinding {
				t.Fatalf("watch event %s: %T", ev.Type, ev.Object)
			}
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.FullyApplied)
			if c == nil {
				continue
			}
			if c.Status != metav1.ConditionTrue || len(got.Status.AggregatedStatus) != 2 {
				t.Fatalf("first status written: FullyApplied=%s (%s) with %d items, want True with 2", c.Status, c.Message, len(got.Status.AggregatedStatus))
			}
			return
		}
	}
}
