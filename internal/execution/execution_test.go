package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/names"
)

func nginx(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

func configMap(namespace, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       data,
	}
}

// memberDeployment waits until the member's Deployment satisfies cond.
func memberDeployment(t *testing.T, c client.Client, key client.ObjectKey, what string, cond func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var got appsv1.Deployment
	controllertest.WaitFor(t, fmt.Sprintf("member Deployment %s %s", key, what), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, &got); err != nil {
			return false, err
		}
		return cond(&got), nil
	})
	return &got
}

func replicasAre(n int32) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool { return d.Spec.Replicas != nil && *d.Spec.Replicas == n }
}

// TestApplyReflectAndRepair follows one Work: applied with the control
// plane's labels and annotations, status and health reflected once kwok's
// pods are Ready, updated, and repaired after the member object is deleted
// or edited behind the control plane's back.
func TestApplyReflectAndRepair(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-apply")
	m1 := e.member("member1")
	// The template lives in the control plane, where its events go.
	if err := e.cp.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	template := nginx(ns, "nginx", 3)
	template.Annotations = map[string]string{workv1alpha1.ResourceTemplateUIDAnnotation: "template-uid"}
	w := newWork(t, "member1", "nginx-apply", template)
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)
	depKey := client.ObjectKey{Namespace: ns, Name: "nginx"}

	applied := e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	if !slices.Contains(applied.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		t.Errorf("finalizers %v lack %s", applied.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	}
	id := applied.Labels[workv1alpha1.WorkPermanentIDLabel]
	if id == "" {
		t.Fatal("the Work got no permanent id")
	}
	if c := findCondition(applied, workv1alpha1.WorkDispatching); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Dispatching condition %+v, want True", c)
	}
	e.hasEvent(t, w.Name, events.ReasonSyncSucceed)
	e.hasEvent(t, template.Name, events.ReasonSyncSucceed)

	dep := memberDeployment(t, m1, depKey, "exists", func(*appsv1.Deployment) bool { return true })
	wantLabels := map[string]string{workv1alpha1.ManagedByKarmadaLabel: "true", workv1alpha1.WorkPermanentIDLabel: id, "app": "nginx"}
	for k, v := range wantLabels {
		if dep.Labels[k] != v {
			t.Errorf("member label %s = %q, want %q", k, dep.Labels[k], v)
		}
	}
	wantAnnotations := map[string]string{workv1alpha1.WorkNamespaceAnnotation: key.Namespace, workv1alpha1.WorkNameAnnotation: key.Name}
	for k, v := range wantAnnotations {
		if dep.Annotations[k] != v {
			t.Errorf("member annotation %s = %q, want %q", k, dep.Annotations[k], v)
		}
	}
	if dep.Annotations[execution.ManifestHashAnnotation] == "" {
		t.Errorf("member object has no %s", execution.ManifestHashAnnotation)
	}

	// kwok makes the pods Ready; the status comes back into the Work.
	statusIs(t, e, key, 3, workv1alpha1.ResourceHealthy)
	e.hasEvent(t, w.Name, events.ReasonReflectStatusSucceed)
	e.hasEvent(t, w.Name, events.ReasonInterpretHealthSucceed)
	got, err := e.getWork(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	wantID := workv1alpha1.ResourceIdentifier{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: ns, Name: "nginx"}
	if len(got.Status.ManifestStatuses) != 1 || got.Status.ManifestStatuses[0].Identifier != wantID {
		t.Errorf("manifestStatuses %+v, want one for %+v", got.Status.ManifestStatuses, wantID)
	}

	t.Run("Work updated", func(t *testing.T) {
		e.updateWork(t, key, func(w *workv1alpha1.Work) { setManifests(t, w, nginx(ns, "nginx", 2)) })
		// The manifest no longer carries the template uid: the annotation
		// goes from the member object too.
		memberDeployment(t, m1, depKey, "without the dropped annotation", func(d *appsv1.Deployment) bool {
			_, ok := d.Annotations[workv1alpha1.ResourceTemplateUIDAnnotation]
			return !ok
		})
		memberDeployment(t, m1, depKey, "scaled to 2", replicasAre(2))
		e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
		statusIs(t, e, key, 2, workv1alpha1.ResourceHealthy)
	})

	t.Run("member object deleted behind our back", func(t *testing.T) {
		var before appsv1.Deployment
		if err := m1.Get(t.Context(), depKey, &before); err != nil {
			t.Fatal(err)
		}
		if err := m1.Delete(t.Context(), &before); err != nil {
			t.Fatal(err)
		}
		memberDeployment(t, m1, depKey, "recreated", func(d *appsv1.Deployment) bool {
			return d.UID != before.UID && d.DeletionTimestamp == nil && *d.Spec.Replicas == 2
		})
	})

	t.Run("member object edited behind our back", func(t *testing.T) {
		editDeployment(t, m1, depKey, func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](5)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
		})
		memberDeployment(t, m1, depKey, "put back", func(d *appsv1.Deployment) bool {
			return *d.Spec.Replicas == 2 && d.Spec.Template.Spec.Containers[0].Image == "nginx:1.27"
		})
	})

	t.Run("member-owned fields are kept", func(t *testing.T) {
		// A label another manager adds is neither removed nor a reason to
		// write again.
		editDeployment(t, m1, depKey, func(d *appsv1.Deployment) { d.Labels["team"] = "member-side" })
		e.updateWork(t, key, func(w *workv1alpha1.Work) { setManifests(t, w, nginx(ns, "nginx", 1)) })
		memberDeployment(t, m1, depKey, "scaled to 1 with the member's label", func(d *appsv1.Deployment) bool {
			return *d.Spec.Replicas == 1 && d.Labels["team"] == "member-side"
		})
	})
}

// editDeployment changes the member's Deployment as someone working in the
// member would, retrying on conflict with the member's controllers.
func editDeployment(t *testing.T, c client.Client, key client.ObjectKey, change func(*appsv1.Deployment)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var d appsv1.Deployment
		if err := c.Get(t.Context(), key, &d); err != nil {
			return err
		}
		change(&d)
		return c.Update(t.Context(), &d)
	})
	if err != nil {
		t.Fatalf("editing member Deployment %s: %v", key, err)
	}
}

// statusIs waits until the Work reflects readyReplicas and health.
func statusIs(t *testing.T, e *env, key client.ObjectKey, ready int64, health workv1alpha1.ResourceHealth) {
	t.Helper()
	controllertest.WaitFor(t, fmt.Sprintf("Work %s reflects readyReplicas %d, %s", key, ready, health), func(ctx context.Context) (bool, error) {
		w, err := e.getWork(ctx, key)
		if err != nil {
			return false, err
		}
		if len(w.Status.ManifestStatuses) != 1 {
			return false, fmt.Errorf("%d manifest statuses", len(w.Status.ManifestStatuses))
		}
		ms := w.Status.ManifestStatuses[0]
		var status struct {
			ReadyReplicas int64 `json:"readyReplicas"`
		}
		if ms.Status != nil {
			if err := json.Unmarshal(ms.Status.Raw, &status); err != nil {
				return false, err
			}
		}
		if status.ReadyReplicas != ready || ms.Health != health {
			return false, fmt.Errorf("readyReplicas %d, health %s", status.ReadyReplicas, ms.Health)
		}
		return true, nil
	})
}

func findCondition(w *workv1alpha1.Work, condType string) *metav1.Condition {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == condType {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

// TestConflictResolution: an object the federation does not manage is left
// alone by default, and taken over with overwrite.
func TestConflictResolution(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-conflict")
	m1 := e.member("member1")
	cmKey := client.ObjectKey{Namespace: ns, Name: "settings"}
	existing := configMap(ns, "settings", map[string]string{"owner": "member"})
	if err := m1.Create(t.Context(), existing); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m1.Delete(context.Background(), existing) })

	w := newWork(t, "member1", "settings-conflict", configMap(ns, "settings", map[string]string{"owner": "federation"}))
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)
	failed := e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionFalse, execution.ReasonResourceConflict)
	if msg := findCondition(failed, workv1alpha1.WorkApplied).Message; !strings.Contains(msg, "ConfigMap "+ns+"/settings") {
		t.Errorf("Applied message %q does not name the object", msg)
	}
	e.hasEvent(t, w.Name, events.ReasonSyncFailed)
	var cm corev1.ConfigMap
	if err := m1.Get(t.Context(), cmKey, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["owner"] != "member" || cm.Labels[workv1alpha1.ManagedByKarmadaLabel] != "" {
		t.Errorf("abort changed the member's ConfigMap: %v %v", cm.Data, cm.Labels)
	}

	t.Run("overwrite", func(t *testing.T) {
		adopt := configMap(ns, "settings", map[string]string{"owner": "federation"})
		adopt.Annotations = map[string]string{workv1alpha1.ConflictResolutionAnnotation: workv1alpha1.ConflictResolutionOverwrite}
		e.updateWork(t, key, func(w *workv1alpha1.Work) { setManifests(t, w, adopt) })
		e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
		if err := m1.Get(t.Context(), cmKey, &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data["owner"] != "federation" || cm.Labels[workv1alpha1.ManagedByKarmadaLabel] != "true" || cm.Annotations[workv1alpha1.WorkNameAnnotation] != key.Name {
			t.Errorf("overwrite did not adopt the ConfigMap: %v %v %v", cm.Data, cm.Labels, cm.Annotations)
		}
	})

	t.Run("another Work's object", func(t *testing.T) {
		// The same ConfigMap from a second Work conflicts with the first.
		other := newWork(t, "member1", "settings-other", configMap(ns, "settings", map[string]string{"owner": "other"}))
		e.create(t, other)
		e.conditionIs(t, client.ObjectKeyFromObject(other), workv1alpha1.WorkApplied, metav1.ConditionFalse, execution.ReasonResourceConflict)
		// Deleting the refused Work leaves the first Work's object alone.
		if err := e.cp.Delete(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		gone(t, "Work "+other.Name, func(ctx context.Context) error {
			return e.cp.Get(ctx, client.ObjectKeyFromObject(other), &workv1alpha1.Work{})
		})
		if err := m1.Get(t.Context(), cmKey, &cm); err != nil {
			t.Fatalf("the first Work's ConfigMap: %v", err)
		}
		if cm.Data["owner"] != "federation" {
			t.Errorf("ConfigMap data %v, want the first Work's", cm.Data)
		}
	})
}

// TestSuspendDispatching: nothing reaches the member until dispatching
// resumes.
func TestSuspendDispatching(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-suspend")
	m2 := e.member("member2")
	w := newWork(t, "member2", "suspended", configMap(ns, "held", map[string]string{"k": "v"}))
	w.Spec.SuspendDispatching = ptr.To(true)
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)

	e.conditionIs(t, key, workv1alpha1.WorkDispatching, metav1.ConditionFalse, workv1alpha1.WorkReasonSuspendDispatching)
	e.hasEvent(t, w.Name, events.ReasonWorkDispatching)
	// The condition is written by the reconcile that decided not to apply.
	err := m2.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "held"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("suspended Work reached the member: %v", err)
	}
	got, err := e.getWork(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if c := findCondition(got, workv1alpha1.WorkApplied); c != nil {
		t.Errorf("suspended Work has Applied %+v", c)
	}

	e.updateWork(t, key, func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = ptr.To(false) })
	e.conditionIs(t, key, workv1alpha1.WorkDispatching, metav1.ConditionTrue, workv1alpha1.WorkReasonDispatching)
	e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	if err := m2.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "held"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("resumed Work not applied: %v", err)
	}
	controllertest.WaitFor(t, "a WorkDispatching event for the resume", func(ctx context.Context) (bool, error) {
		msgs, err := e.eventMessages(ctx, w.Name, events.ReasonWorkDispatching)
		return len(msgs) >= 2, err
	})
}

// TestDeletion: deleting a Work deletes its member objects, or with
// preserveResourcesOnDeletion leaves them without the control plane's
// marks; the member informers go when no Work needs them.
func TestDeletion(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-delete")
	m1 := e.member("member1")

	removed := newWork(t, "member1", "removed", configMap(ns, "removed", map[string]string{"k": "v"}))
	kept := newWork(t, "member1", "kept", configMap(ns, "kept", map[string]string{"k": "v"}))
	kept.Spec.PreserveResourcesOnDeletion = ptr.To(true)
	for _, w := range []*workv1alpha1.Work{removed, kept} {
		e.create(t, w)
		e.conditionIs(t, client.ObjectKeyFromObject(w), workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	}
	cmInformer := execution.ManagedObjectsKey(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	controllertest.WaitFor(t, "the ConfigMap informer runs in member1", func(context.Context) (bool, error) {
		return slices.Contains(e.ctl.Informers.Running("member1"), cmInformer), nil
	})

	for _, w := range []*workv1alpha1.Work{removed, kept} {
		if err := e.cp.Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		gone(t, "Work "+w.Name, func(ctx context.Context) error {
			return e.cp.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{})
		})
	}
	gone(t, "member ConfigMap removed", func(ctx context.Context) error {
		return m1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "removed"}, &corev1.ConfigMap{})
	})
	var cm corev1.ConfigMap
	if err := m1.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "kept"}, &cm); err != nil {
		t.Fatalf("preserved ConfigMap: %v", err)
	}
	t.Cleanup(func() { _ = m1.Delete(context.Background(), &cm) })
	for _, k := range []string{workv1alpha1.ManagedByKarmadaLabel, workv1alpha1.WorkPermanentIDLabel} {
		if _, ok := cm.Labels[k]; ok {
			t.Errorf("preserved ConfigMap keeps label %s", k)
		}
	}
	for _, k := range []string{workv1alpha1.WorkNamespaceAnnotation, workv1alpha1.WorkNameAnnotation, execution.ManifestHashAnnotation} {
		if _, ok := cm.Annotations[k]; ok {
			t.Errorf("preserved ConfigMap keeps annotation %s", k)
		}
	}
	if cm.Data["k"] != "v" {
		t.Errorf("preserved ConfigMap data %v", cm.Data)
	}
	controllertest.WaitFor(t, "the ConfigMap informer stops in member1", func(context.Context) (bool, error) {
		return !slices.Contains(e.ctl.Informers.Running("member1"), cmInformer), nil
	})
}

// TestUnreachableMember: a member whose API server cannot be reached fails
// its Works (no crash, other members unaffected) and catches up when it is
// back; a Work deleted meanwhile waits for it, unless its Cluster goes.
func TestUnreachableMember(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-unreachable")
	member2 := e.fed.Member("member2")
	proxy := controllertest.StartTCPProxy(t, hostPort(member2.Endpoint))

	// "flaky" is member2 seen through the proxy, with member2's credentials.
	const flaky = "flaky"
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: flaky},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://" + proxy.Addr,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: clusterv1alpha1.NamespaceClusterSecrets, Name: "member2"},
		},
	}
	if err := e.cp.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.cp.Delete(context.Background(), cluster) })
	e.makeReady(t, flaky)

	proxy.Stop()
	w := newWork(t, flaky, "through-proxy", configMap(ns, "through-proxy", map[string]string{"k": "v"}))
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)
	e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionFalse, workv1alpha1.WorkReasonAppliedFailed)
	e.hasEvent(t, w.Name, events.ReasonSyncFailed)

	// The controllers still serve the other members.
	healthy := newWork(t, "member1", "while-flaky", configMap(ns, "while-flaky", nil))
	e.create(t, healthy)
	e.conditionIs(t, client.ObjectKeyFromObject(healthy), workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)

	proxy.Restart(t)
	e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	cmKey := client.ObjectKey{Namespace: ns, Name: "through-proxy"}
	if err := member2.Client.Get(t.Context(), cmKey, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("applied after the member came back: %v", err)
	}

	t.Run("deleted while unreachable", func(t *testing.T) {
		proxy.Stop()
		if err := e.cp.Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		// The finalizer holds the Work while the member cannot be cleaned
		// up: it is still there after a failed attempt.
		controllertest.WaitFor(t, "the Work waits for the member", func(ctx context.Context) (bool, error) {
			got, err := e.getWork(ctx, key)
			if err != nil {
				return false, err
			}
			return got.DeletionTimestamp != nil, nil
		})
		if err := member2.Client.Get(t.Context(), cmKey, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("member object: %v", err)
		}
		proxy.Restart(t)
		gone(t, "Work "+w.Name, func(ctx context.Context) error { return e.cp.Get(ctx, key, &workv1alpha1.Work{}) })
		gone(t, "member ConfigMap", func(ctx context.Context) error { return member2.Client.Get(ctx, cmKey, &corev1.ConfigMap{}) })
	})

	t.Run("cluster gone while unreachable", func(t *testing.T) {
		last := newWork(t, flaky, "orphaned", configMap(ns, "orphaned", nil))
		e.create(t, last)
		lastKey := client.ObjectKeyFromObject(last)
		e.conditionIs(t, lastKey, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
		proxy.Stop()
		if err := e.cp.Delete(t.Context(), last); err != nil {
			t.Fatal(err)
		}
		// Nothing runs the cluster controller here: the Cluster has no
		// finalizer and goes at once.
		if err := e.cp.Delete(t.Context(), cluster); err != nil {
			t.Fatal(err)
		}
		gone(t, "Work of the removed cluster", func(ctx context.Context) error { return e.cp.Get(ctx, lastKey, &workv1alpha1.Work{}) })
		// Left in the member: nobody could reach it to clean up.
		_ = member2.Client.Delete(context.Background(), configMap(ns, "orphaned", nil))
	})
}

// TestWorkOutsideExecutionSpace: Works elsewhere are not this controller's.
func TestWorkOutsideExecutionSpace(t *testing.T) {
	e := start(t)
	w := newWork(t, "member1", "stray", configMap("default", "stray", nil))
	w.Namespace = "default"
	e.create(t, w)
	ready := newWork(t, "member1", "marker", configMap("default", "marker", nil))
	e.create(t, ready)
	e.conditionIs(t, client.ObjectKeyFromObject(ready), workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	got, err := e.getWork(t.Context(), client.ObjectKeyFromObject(w))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) > 0 || len(got.Status.Conditions) > 0 {
		t.Errorf("Work outside an execution namespace was handled: %v %v", got.Finalizers, got.Status.Conditions)
	}
	if names.ExecutionSpace("member1") == w.Namespace {
		t.Fatal("test is wrong")
	}
}

// TestClusterScopedAndRetained: a cluster-scoped object and a Service,
// whose member-allocated cluster IP survives updates.
func TestClusterScopedAndRetained(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-scoped")
	m2 := e.member("member2")
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "t-scoped:reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: port}},
			},
		}
	}
	w := newWork(t, "member2", "scoped", role, svc(80))
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)
	e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)

	var gotRole rbacv1.ClusterRole
	if err := m2.Get(t.Context(), client.ObjectKey{Name: role.Name}, &gotRole); err != nil {
		t.Fatal(err)
	}
	if gotRole.Labels[workv1alpha1.ManagedByKarmadaLabel] != "true" {
		t.Errorf("ClusterRole labels %v", gotRole.Labels)
	}
	var gotSvc corev1.Service
	if err := m2.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &gotSvc); err != nil {
		t.Fatal(err)
	}
	clusterIP := gotSvc.Spec.ClusterIP
	if clusterIP == "" {
		t.Fatal("member allocated no cluster IP")
	}

	e.updateWork(t, key, func(w *workv1alpha1.Work) { setManifests(t, w, role, svc(8080)) })
	e.conditionIs(t, key, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful)
	if err := m2.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &gotSvc); err != nil {
		t.Fatal(err)
	}
	if gotSvc.Spec.Ports[0].Port != 8080 || gotSvc.Spec.ClusterIP != clusterIP {
		t.Errorf("Service port %d, cluster IP %s; want 8080 and %s kept", gotSvc.Spec.Ports[0].Port, gotSvc.Spec.ClusterIP, clusterIP)
	}

	if err := e.cp.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	gone(t, "member ClusterRole", func(ctx context.Context) error {
		return m2.Get(ctx, client.ObjectKey{Name: role.Name}, &rbacv1.ClusterRole{})
	})
	gone(t, "member Service", func(ctx context.Context) error {
		return m2.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.Service{})
	})
}

// TestFirstStatusWithApplied checks that a new Work's first status write
// carries both the Applied condition and the manifest's status entry: the
// execution controller writes the entry it can interpret from the member's
// answer, instead of leaving it to a second write by the work-status
// controller. No version of the Work may have one without the other.
func TestFirstStatusWithApplied(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-first-status")
	wc, err := client.NewWithWatch(e.fed.ControlPlane.Config, client.Options{Scheme: e.cp.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w := newWork(t, "member1", "first-status", nginx(ns, "nginx", 1))
	watcher, err := wc.Watch(t.Context(), &workv1alpha1.WorkList{}, client.InNamespace(w.Namespace),
		client.MatchingFields{"metadata.name": w.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	e.create(t, w)

	wantID := workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: ns, Name: "nginx"}
	for {
		select {
		case <-t.Context().Done():
			t.Fatal("test ended before the Work was applied")
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatal("watch closed before the Work was applied")
			}
			got, isWork := ev.Object.(*workv1alpha1.Work)
			if !isWork {
				t.Fatalf("watch event %s: %T", ev.Type, ev.Object)
			}
			applied := findCondition(got, workv1alpha1.WorkApplied)
			entries := len(got.Status.ManifestStatuses)
			switch {
			case applied == nil && entries == 0:
				continue // not reported yet
			case applied == nil:
				t.Fatalf("resourceVersion %s has manifest statuses without Applied: %+v", got.ResourceVersion, got.Status.ManifestStatuses)
			case entries != 1 || got.Status.ManifestStatuses[0].Identifier != wantID:
				t.Fatalf("resourceVersion %s is Applied=%s with manifest statuses %+v, want one for %+v",
					got.ResourceVersion, applied.Status, got.Status.ManifestStatuses, wantID)
			}
			if applied.Status != metav1.ConditionTrue {
				t.Errorf("Applied=%s (%s), want True", applied.Status, applied.Message)
			}
			e.hasEvent(t, w.Name, events.ReasonReflectStatusSucceed)
			e.hasEvent(t, w.Name, events.ReasonInterpretHealthSucceed)
			return
		}
	}
}
