package binding_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// manifestOf decodes a Work's single manifest.
func manifestOf(t *testing.T, w *workv1alpha1.Work) *unstructured.Unstructured {
	t.Helper()
	if len(w.Spec.Workload.Manifests) != 1 {
		t.Fatalf("Work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		t.Fatal(err)
	}
	return u
}

func replicasAndImage(t *testing.T, w *workv1alpha1.Work) (int64, string) {
	t.Helper()
	m := manifestOf(t, w)
	replicas, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
	image := ""
	if len(containers) > 0 {
		image, _ = containers[0].(map[string]any)["image"].(string)
	}
	return replicas, image
}

// waitWork waits until the Work at key satisfies check.
func waitWork(t *testing.T, key client.ObjectKey, what string, check func(*workv1alpha1.Work) bool) *workv1alpha1.Work {
	t.Helper()
	var got *workv1alpha1.Work
	waitFor(t, fmt.Sprintf("Work %s %s", key, what), func(ctx context.Context) (bool, error) {
		w, err := getWork(ctx, key)
		if err != nil || w == nil || !w.DeletionTimestamp.IsZero() {
			return false, err
		}
		got = w
		return check(w), nil
	})
	return got
}

func hasEvent(t *testing.T, objName, reason string) {
	t.Helper()
	waitFor(t, "event "+reason+" on "+objName, func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, apiClient, objName, reason)
	})
}

// A binding scheduled to two clusters gets a Work in each, with the
// scheduled replicas and the overrides of each cluster; it follows template
// updates and schedule changes.
func TestWorksFollowTheSchedule(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "schedule")
	mirror := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirror"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
			Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
				Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.example.com",
			}}},
		}}},
	}
	if err := apiClient.Create(t.Context(), mirror); err != nil {
		t.Fatal(err)
	}
	d := deployment(t, ns, "nginx", 6, "nginx:1.27")
	rb := deploymentBinding(t, d, targets("member1", 4, "member2", 2))

	k1, k2 := workKey("member1", ns, "nginx", "Deployment"), workKey("member2", ns, "nginx", "Deployment")
	w1 := waitWork(t, k1, "has 4 replicas", func(w *workv1alpha1.Work) bool { r, _ := replicasAndImage(t, w); return r == 4 })
	w2 := waitWork(t, k2, "has 2 replicas", func(w *workv1alpha1.Work) bool { r, _ := replicasAndImage(t, w); return r == 2 })
	if _, img := replicasAndImage(t, w1); img != "nginx:1.27" {
		t.Errorf("member1 image = %q, want the template's", img)
	}
	if _, img := replicasAndImage(t, w2); img != "mirror.example.com/nginx:1.27" {
		t.Errorf("member2 image = %q, want the override's", img)
	}

	// The Work and its manifest are linked to the binding and the template.
	wantLabels := map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]}
	for k, v := range wantLabels {
		if w1.Labels[k] != v {
			t.Errorf("Work label %s = %q, want %q", k, w1.Labels[k], v)
		}
	}
	if w1.Labels[workv1alpha1.WorkPermanentIDLabel] == "" {
		t.Error("Work has no permanent id")
	}
	wantAnnotations := map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotationKey: ns,
		workv1alpha2.ResourceBindingNameAnnotationKey:      rb.Name,
		workv1alpha1.ConflictResolutionAnnotation:          "abort",
	}
	for k, v := range wantAnnotations {
		if w1.Annotations[k] != v {
			t.Errorf("Work annotation %s = %q, want %q", k, w1.Annotations[k], v)
		}
	}
	if !slices.Contains(w1.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		t.Errorf("Work finalizers = %v, want the execution controller's", w1.Finalizers)
	}
	m := manifestOf(t, w1)
	for k, v := range map[string]string{
		workv1alpha1.ManagedByKarmadaLabel:           "true",
		workv1alpha2.ResourceBindingPermanentIDLabel: wantLabels[workv1alpha2.ResourceBindingPermanentIDLabel],
		workv1alpha1.WorkPermanentIDLabel:            w1.Labels[workv1alpha1.WorkPermanentIDLabel],
		"app":                                        "nginx",
	} {
		if got := m.GetLabels()[k]; got != v {
			t.Errorf("manifest label %s = %q, want %q", k, got, v)
		}
	}
	for k, v := range map[string]string{
		workv1alpha1.ResourceTemplateUIDAnnotation:        string(d.UID),
		workv1alpha1.ResourceTemplateGenerationAnnotation: "1",
		workv1alpha1.WorkNamespaceAnnotation:              k1.Namespace,
		workv1alpha1.WorkNameAnnotation:                   k1.Name,
		workv1alpha1.ConflictResolutionAnnotation:         "abort",
	} {
		if got := m.GetAnnotations()[k]; got != v {
			t.Errorf("manifest annotation %s = %q, want %q", k, got, v)
		}
	}
	if m.GetUID() != "" || m.GetResourceVersion() != "" || m.Object["status"] != nil {
		t.Errorf("manifest keeps server fields: uid %q, resourceVersion %q, status %v", m.GetUID(), m.GetResourceVersion(), m.Object["status"])
	}
	got := &workv1alpha2.ResourceBinding{}
	if err := apiClient.Get(t.Context(), client.ObjectKeyFromObject(rb), got); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Finalizers, workv1alpha2.BindingControllerFinalizer) {
		t.Errorf("binding finalizers = %v, want %s", got.Finalizers, workv1alpha2.BindingControllerFinalizer)
	}
	hasEvent(t, rb.Name, "SyncWorkSucceed")
	hasEvent(t, d.Name, "SyncWorkSucceed")
	hasEvent(t, d.Name, "ApplyOverridePolicySucceed")

	// A template update reaches the Works once the detector records it in
	// the binding.
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	if err := apiClient.Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	updateBinding(t, client.ObjectKeyFromObject(rb), func(rb *workv1alpha2.ResourceBinding) {
		rb.Spec.Resource.ResourceVersion = d.ResourceVersion
	})
	waitWork(t, k2, "has the new image", func(w *workv1alpha1.Work) bool {
		_, img := replicasAndImage(t, w)
		return img == "mirror.example.com/nginx:1.28"
	})

	// member2 leaves the schedule: its Work goes.
	updateBinding(t, client.ObjectKeyFromObject(rb), func(rb *workv1alpha2.ResourceBinding) {
		rb.Spec.Clusters = targets("member1", 6)
	})
	waitWork(t, k1, "has 6 replicas", func(w *workv1alpha1.Work) bool { r, _ := replicasAndImage(t, w); return r == 6 })
	waitWorkGone(t, k2)
}

// Deleting a binding deletes its Works, then releases the binding.
func TestBindingDeletion(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "deletion")
	d := deployment(t, ns, "web", 2, "nginx")
	rb := deploymentBinding(t, d, targets("member1", 1, "member2", 1))
	k1, k2 := workKey("member1", ns, "web", "Deployment"), workKey("member2", ns, "web", "Deployment")
	waitWork(t, k1, "exists", func(*workv1alpha1.Work) bool { return true })
	waitWork(t, k2, "exists", func(*workv1alpha1.Work) bool { return true })

	if err := apiClient.Delete(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	waitWorkGone(t, k1)
	waitWorkGone(t, k2)
	waitFor(t, "the binding is gone", func(ctx context.Context) (bool, error) {
		err := apiClient.Get(ctx, client.ObjectKeyFromObject(rb), &workv1alpha2.ResourceBinding{})
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})
}

// A Work deleted behind the controller's back is recreated.
func TestDeletedWorkRecreated(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "recreate")
	d := deployment(t, ns, "web", 2, "nginx")
	deploymentBinding(t, d, targets("member1", 2))
	key := workKey("member1", ns, "web", "Deployment")
	old := waitWork(t, key, "exists", func(*workv1alpha1.Work) bool { return true })

	if err := apiClient.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	releaseWork(t, key)
	waitWork(t, key, "is recreated", func(w *workv1alpha1.Work) bool { return w.UID != old.UID })
}

// A binding whose Works are up to date causes no Work writes.
func TestUpToDateWorksNotRewritten(t *testing.T) {
	// One worker: bindings are reconciled in the order their events come.
	counter := start(t, 1)
	ns := namespace(t, "quiet")
	a := deployment(t, ns, "a", 3, "nginx")
	rbA := deploymentBinding(t, a, targets("member1", 2, "member2", 1))
	ka1, ka2 := workKey("member1", ns, "a", "Deployment"), workKey("member2", ns, "a", "Deployment")
	wa1 := waitWork(t, ka1, "exists", func(*workv1alpha1.Work) bool { return true })
	wa2 := waitWork(t, ka2, "exists", func(*workv1alpha1.Work) bool { return true })
	before := len(counter.Writes())

	// Touch a's binding, then create b's: once b's Work exists, a's
	// reconcile has run.
	updateBinding(t, client.ObjectKeyFromObject(rbA), func(rb *workv1alpha2.ResourceBinding) {
		rb.Labels["touched"] = "yes"
	})
	b := deployment(t, ns, "b", 1, "nginx")
	deploymentBinding(t, b, targets("member1", 1))
	waitWork(t, workKey("member1", ns, "b", "Deployment"), "exists", func(*workv1alpha1.Work) bool { return true })

	var writes []string
	for _, w := range counter.Writes()[before:] {
		if strings.HasSuffix(w, " "+ka1.String()) || strings.HasSuffix(w, " "+ka2.String()) {
			writes = append(writes, w)
		}
	}
	if len(writes) > 0 {
		t.Errorf("Work writes after touching an up-to-date binding: %v", writes)
	}
	for _, w := range []*workv1alpha1.Work{wa1, wa2} {
		now, err := getWork(t.Context(), client.ObjectKeyFromObject(w))
		if err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != w.ResourceVersion {
			t.Errorf("Work %s/%s was rewritten: resourceVersion %s -> %s", w.Namespace, w.Name, w.ResourceVersion, now.ResourceVersion)
		}
	}
}

// Suspended dispatching is carried to the Works, everywhere or per cluster.
func TestSuspendDispatching(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "suspend")
	d := deployment(t, ns, "web", 2, "nginx")
	rb := deploymentBinding(t, d, targets("member1", 1, "member2", 1), func(rb *workv1alpha2.ResourceBinding) {
		rb.Spec.Suspension = &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}
	})
	k1, k2 := workKey("member1", ns, "web", "Deployment"), workKey("member2", ns, "web", "Deployment")
	suspended := func(w *workv1alpha1.Work) bool { return ptr.Deref(w.Spec.SuspendDispatching, false) }
	waitWork(t, k1, "is suspended", suspended)
	waitWork(t, k2, "is suspended", suspended)

	updateBinding(t, client.ObjectKeyFromObject(rb), func(rb *workv1alpha2.ResourceBinding) {
		rb.Spec.Suspension = &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{
			DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}},
		}}
	})
	waitWork(t, k1, "is resumed", func(w *workv1alpha1.Work) bool { return !suspended(w) })
	waitWork(t, k2, "stays suspended", suspended)
}

// An override that cannot be applied holds that cluster's Work back and is
// reported; fixing the policy releases it.
func TestOverrideFailure(t *testing.T) {
	start(t, 2)
	ns := namespace(t, "badoverride")
	broken := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
			Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/spec/nothing", Operator: policyv1alpha1.OverriderOpRemove,
			}}},
		}}},
	}
	if err := apiClient.Create(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	d := deployment(t, ns, "web", 2, "nginx")
	rb := deploymentBinding(t, d, targets("member1", 1, "member2", 1))
	k1, k2 := workKey("member1", ns, "web", "Deployment"), workKey("member2", ns, "web", "Deployment")
	waitWork(t, k1, "exists", func(*workv1alpha1.Work) bool { return true })
	hasEvent(t, d.Name, "ApplyOverridePolicyFailed")
	hasEvent(t, rb.Name, "SyncWorkFailed")
	if w, err := getWork(t.Context(), k2); err != nil || w != nil {
		t.Fatalf("member2 has a Work despite the failing override (err %v)", err)
	}

	if err := apiClient.Delete(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	waitWork(t, k2, "exists once the policy is fixed", func(*workv1alpha1.Work) bool { return true })
}

// A ClusterResourceBinding of a cluster-scoped template gets Works named
// and labelled for cluster bindings.
func TestClusterResourceBinding(t *testing.T) {
	start(t, 2)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:" + unique("flotilla-test")},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	if err := apiClient.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: names.Binding(role.Name, "ClusterRole")},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: resourceOf(role, "rbac.authorization.k8s.io/v1", "ClusterRole"),
			Clusters: targets("member1", 0, "member3", 0),
		},
	}
	if err := apiClient.Create(t.Context(), crb); err != nil {
		t.Fatal(err)
	}
	var id string
	waitFor(t, "the cluster binding gets an id", func(ctx context.Context) (bool, error) {
		got := &workv1alpha2.ClusterResourceBinding{}
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(crb), got); err != nil {
			return false, err
		}
		id = got.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
		return id != "" && slices.Contains(got.Finalizers, workv1alpha2.ClusterResourceBindingControllerFinalizer), nil
	})
	for _, c := range []string{"member1", "member3"} {
		key := workKey(c, "", role.Name, "ClusterRole")
		if !strings.HasPrefix(key.Name, "system.flotilla-test-") {
			t.Fatalf("Work name %s: want the colon replaced", key.Name)
		}
		w := waitWork(t, key, "exists", func(*workv1alpha1.Work) bool { return true })
		if w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != id ||
			w.Annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] != crb.Name {
			t.Errorf("Work %s labels %v annotations %v do not name the cluster binding", key, w.Labels, w.Annotations)
		}
		m := manifestOf(t, w)
		if m.GetKind() != "ClusterRole" || m.GetName() != role.Name || m.GetLabels()[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != id {
			t.Errorf("manifest %s %s labels %v", m.GetKind(), m.GetName(), m.GetLabels())
		}
	}

	if err := apiClient.Delete(t.Context(), crb); err != nil {
		t.Fatal(err)
	}
	waitWorkGone(t, workKey("member1", "", role.Name, "ClusterRole"))
	waitWorkGone(t, workKey("member3", "", role.Name, "ClusterRole"))
}

// A Work of a cluster being deleted, deleted by the cluster controller, is
// not written again while the binding still names the cluster: the
// cluster's deletion waits for its execution namespace to empty.
func TestNoWorkForClusterBeingDeleted(t *testing.T) {
	// One worker: bindings are reconciled in the order their events come.
	start(t, 1)
	ctx := t.Context()
	const leaving = "leaving"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(leaving)}},
		&clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: leaving, Finalizers: []string{clusterv1alpha1.ClusterControllerFinalizer}},
			Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"},
		},
	} {
		if err := apiClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c := &clusterv1alpha1.Cluster{}
		if err := apiClient.Get(context.Background(), client.ObjectKey{Name: leaving}, c); err == nil {
			c.Finalizers = nil
			_ = apiClient.Update(context.Background(), c)
		}
	})
	ns := namespace(t, "leaving")
	d := deployment(t, ns, "web", 1, "nginx")
	rb := deploymentBinding(t, d, targets(leaving, 1))
	key := workKey(leaving, ns, "web", "Deployment")
	waitWork(t, key, "exists", func(*workv1alpha1.Work) bool { return true })

	if err := apiClient.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: leaving}}); err != nil {
		t.Fatal(err)
	}
	// What the cluster controller does for a cluster being deleted.
	if err := apiClient.Delete(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	releaseWork(t, key)
	waitFor(t, "Work "+key.String()+" is gone", func(ctx context.Context) (bool, error) {
		w, err := getWork(ctx, key)
		return err == nil && w == nil, err
	})

	// Touch the binding, then create another one: once the other's Work
	// exists, this one has been reconciled after the Work went.
	updateBinding(t, client.ObjectKeyFromObject(rb), func(rb *workv1alpha2.ResourceBinding) { rb.Labels["touched"] = "yes" })
	other := deployment(t, ns, "other", 1, "nginx")
	deploymentBinding(t, other, targets("member1", 1))
	waitWork(t, workKey("member1", ns, "other", "Deployment"), "exists", func(*workv1alpha1.Work) bool { return true })
	if w, err := getWork(ctx, key); err != nil || w != nil {
		t.Errorf("Work of the cluster being deleted: %v, %v; want none", w, err)
	}
}
