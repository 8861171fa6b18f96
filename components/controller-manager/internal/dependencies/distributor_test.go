package dependencies_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/dependencies"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// requiredBy tells whether rb's requiredBy is exactly want.
func requiredBy(rb *workv1alpha2.ResourceBinding, want ...workv1alpha2.BindingSnapshot) bool {
	return cmp.Equal(want, rb.Spec.RequiredBy) || (len(want) == 0 && len(rb.Spec.RequiredBy) == 0)
}

func snapshot(ns, name string, clusters ...string) workv1alpha2.BindingSnapshot {
	return workv1alpha2.BindingSnapshot{Namespace: ns, Name: name, Clusters: targets(clusters...)}
}

// TestAttachedBindingsFollowTheSchedule: a Deployment mounting a ConfigMap
// and a Secret and running as a ServiceAccount gets an attached binding for
// each, required by its binding with its schedule; the binding controller
// renders them into Works for those clusters; a new schedule moves them; a
// changed ConfigMap is referenced at its new version.
func TestAttachedBindingsFollowTheSchedule(t *testing.T) {
	ns := namespace(t, "follow")
	cm := configMap(t, ns, "cfg")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"}})
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sa"}})
	d := deployment(t, ns, "web", podUsing("cfg", "sec", "sa"))
	rb := dependentBinding(t, d, targets("member1", "member2"))

	want := snapshot(ns, rb.Name, "member1", "member2")
	for _, dep := range []struct{ name, kind string }{{"cfg", "ConfigMap"}, {"sec", "Secret"}, {"sa", "ServiceAccount"}} {
		attached := waitBinding(t, ns, names.Binding(dep.name, dep.kind), "requires the Deployment's schedule", func(b *workv1alpha2.ResourceBinding) bool {
			return requiredBy(b, want)
		})
		if got := attached.Labels[workv1alpha2.BindingManagedByLabel]; got != dependencies.ManagedBy {
			t.Errorf("%s: managed-by = %q, want %q", attached.Name, got, dependencies.ManagedBy)
		}
		if got := attached.Labels[dependencies.DependedByLabel(ns, rb.Name)]; got != rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] {
			t.Errorf("%s: depended-by label = %q, want the dependent's permanent id", attached.Name, got)
		}
		if attached.Spec.Placement != nil || len(attached.Spec.Clusters) != 0 {
			t.Errorf("%s: placement %v, clusters %v; want none, so the scheduler leaves it alone", attached.Name, attached.Spec.Placement, attached.Spec.Clusters)
		}
		ref := attached.Spec.Resource
		if ref.APIVersion != "v1" || ref.Kind != dep.kind || ref.Namespace != ns || ref.Name != dep.name || ref.UID == "" || ref.ResourceVersion == "" {
			t.Errorf("%s: resource = %+v", attached.Name, ref)
		}
		if owner := metav1.GetControllerOf(attached); owner == nil || owner.UID != ref.UID {
			t.Errorf("%s: controller %v, want the dependency %s", attached.Name, owner, ref.UID)
		}
	}

	dependent := waitBinding(t, ns, rb.Name, "has the finalizer and the dependencies", func(b *workv1alpha2.ResourceBinding) bool {
		return controllerutil.ContainsFinalizer(b, workv1alpha2.BindingDependenciesDistributorFinalizer) &&
			b.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] != ""
	})
	var recorded []configv1alpha1.DependentObjectReference
	if err := json.Unmarshal([]byte(dependent.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]), &recorded); err != nil {
		t.Fatalf("dependencies annotation: %v", err)
	}
	if len(recorded) != 3 {
		t.Errorf("dependencies annotation lists %+v, want the ConfigMap, the Secret and the ServiceAccount", recorded)
	}
	waitEvent(t, ns, d.Name, flotillaevents.ReasonGetDependenciesSucceed)
	waitEvent(t, ns, rb.Name, flotillaevents.ReasonSyncDependenciesSucceed)

	// The binding controller renders the attached binding where its
	// dependent is.
	for _, c := range []string{"member1", "member2"} {
		waitFor(t, "the ConfigMap's Work in "+c, func(ctx context.Context) (bool, error) {
			return cfgWorkExists(ctx, c, ns)
		})
	}
	if ok, err := cfgWorkExists(t.Context(), "member3", ns); err != nil || ok {
		t.Errorf("the ConfigMap has a Work in member3 (err %v)", err)
	}

	updateBinding(t, ns, rb.Name, func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters = targets("member3") })
	for _, name := range []string{"cfg-configmap", "sec-secret", "sa-serviceaccount"} {
		waitBinding(t, ns, name, "follows the new schedule", func(b *workv1alpha2.ResourceBinding) bool {
			return requiredBy(b, snapshot(ns, rb.Name, "member3"))
		})
	}
	waitFor(t, "the ConfigMap's Work moves to member3", func(ctx context.Context) (bool, error) {
		in3, err := cfgWorkExists(ctx, "member3", ns)
		if err != nil {
			return false, err
		}
		in1, err := cfgWorkExists(ctx, "member1", ns)
		return in3 && !in1, err
	})

	cm.Data = map[string]string{"k": "changed"}
	if err := apiClient.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	waitBinding(t, ns, "cfg-configmap", "refers to the changed ConfigMap", func(b *workv1alpha2.ResourceBinding) bool {
		return b.Spec.Resource.ResourceVersion == cm.ResourceVersion
	})
}

// TestDependentDeletedReleasesAttachedBindings: two Deployments share a
// ConfigMap; deleting one binding removes its entry and lets the binding
// go; deleting the last one deletes the attached binding.
func TestDependentDeletedReleasesAttachedBindings(t *testing.T) {
	ns := namespace(t, "release")
	configMap(t, ns, "shared")
	web := dependentBinding(t, deployment(t, ns, "web", podUsing("shared", "", "")), targets("member1"))
	api := dependentBinding(t, deployment(t, ns, "api", podUsing("shared", "", "")), targets("member2"))
	waitBinding(t, ns, "shared-configmap", "is required by both", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 2
	})
	waitBinding(t, ns, web.Name, "has the finalizer", func(b *workv1alpha2.ResourceBinding) bool {
		return controllerutil.ContainsFinalizer(b, workv1alpha2.BindingDependenciesDistributorFinalizer)
	})

	if err := apiClient.Delete(t.Context(), web); err != nil {
		t.Fatal(err)
	}
	attached := waitBinding(t, ns, "shared-configmap", "is required by api only", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, api.Name, "member2"))
	})
	if _, ok := attached.Labels[dependencies.DependedByLabel(ns, web.Name)]; ok {
		t.Errorf("the depended-by label of the deleted binding is still there: %v", attached.Labels)
	}
	waitBindingGone(t, ns, web.Name)

	if err := apiClient.Delete(t.Context(), api); err != nil {
		t.Fatal(err)
	}
	waitBindingGone(t, ns, "shared-configmap")
	waitBindingGone(t, ns, api.Name)
}

// TestOwnBindingGetsRequiredByOnly: a dependency that its own policy
// propagates keeps its placement and settings; it only gets the entry,
// and a DependencyPolicyConflict event since the settings disagree.
func TestOwnBindingGetsRequiredByOnly(t *testing.T) {
	ns := namespace(t, "own")
	cm := configMap(t, ns, "cfg")
	placement := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}}
	own := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "cfg-configmap",
			Labels: map[string]string{
				workv1alpha2.ResourceBindingPermanentIDLabel:     "own-id",
				policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id",
			},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:           workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cfg", UID: cm.UID, ResourceVersion: cm.ResourceVersion},
			Placement:          placement,
			Clusters:           targets("member3"),
			ConflictResolution: policyv1alpha1.ConflictOverwrite,
		},
	}
	create(t, own)
	rb := dependentBinding(t, deployment(t, ns, "web", podUsing("cfg", "", "")), targets("member1"))

	got := waitBinding(t, ns, own.Name, "is required by the Deployment", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})
	if diff := cmp.Diff(placement, got.Spec.Placement); diff != "" {
		t.Errorf("placement changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(targets("member3"), got.Spec.Clusters); diff != "" {
		t.Errorf("clusters changed (-want +got):\n%s", diff)
	}
	if got.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite {
		t.Errorf("conflictResolution = %q, want the policy's Overwrite", got.Spec.ConflictResolution)
	}
	if _, ok := got.Labels[workv1alpha2.BindingManagedByLabel]; ok {
		t.Errorf("the policy's binding was marked as the distributor's: %v", got.Labels)
	}
	if got.Labels[dependencies.DependedByLabel(ns, rb.Name)] == "" {
		t.Errorf("no depended-by label: %v", got.Labels)
	}
	waitEvent(t, ns, own.Name, flotillaevents.ReasonDependencyPolicyConflict)
	waitFor(t, "the ConfigMap's Work in member1 and member3", func(ctx context.Context) (bool, error) {
		in1, err := cfgWorkExists(ctx, "member1", ns)
		if err != nil {
			return false, err
		}
		in3, err := cfgWorkExists(ctx, "member3", ns)
		return in1 && in3, err
	})

	if err := apiClient.Delete(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	waitBindingGone(t, ns, rb.Name)
	got = waitBinding(t, ns, own.Name, "is required by nothing", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 0
	})
	if got.DeletionTimestamp != nil {
		t.Errorf("the policy's binding is being deleted")
	}
}

// TestDependencyCreatedLater: a dependency created after its workload's
// binding is picked up.
func TestDependencyCreatedLater(t *testing.T) {
	ns := namespace(t, "later")
	rb := dependentBinding(t, deployment(t, ns, "web", podUsing("late", "", "")), targets("member1"))
	waitBinding(t, ns, rb.Name, "records the dependency", func(b *workv1alpha2.ResourceBinding) bool {
		return b.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] != ""
	})
	if got, err := getBinding(t.Context(), ns, "late-configmap"); err != nil || got != nil {
		t.Fatalf("attached binding before the ConfigMap exists: %v (err %v)", got, err)
	}
	configMap(t, ns, "late")
	waitBinding(t, ns, "late-configmap", "is required by the Deployment", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})
}

// TestDependenciesDropped: a workload that stops using a dependency
// releases it; propagateDeps turned off releases them all, with the
// annotation and the finalizer.
func TestDependenciesDropped(t *testing.T) {
	ns := namespace(t, "dropped")
	configMap(t, ns, "cfg")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"}})
	d := deployment(t, ns, "web", podUsing("cfg", "sec", ""))
	rb := dependentBinding(t, d, targets("member1"))
	waitBinding(t, ns, "cfg-configmap", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })
	waitBinding(t, ns, "sec-secret", "exists", func(*workv1alpha2.ResourceBinding) bool { return true })

	d.Spec.Template.Spec = podUsing("cfg", "", "")
	if err := apiClient.Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	// The detector refers the binding to the template's new version.
	updateBinding(t, ns, rb.Name, func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.ResourceVersion = d.ResourceVersion })
	waitBindingGone(t, ns, "sec-secret")
	if got, err := getBinding(t.Context(), ns, "cfg-configmap"); err != nil || got == nil || got.DeletionTimestamp != nil {
		t.Fatalf("the ConfigMap's attached binding went too: %v (err %v)", got, err)
	}

	updateBinding(t, ns, rb.Name, func(b *workv1alpha2.ResourceBinding) { b.Spec.PropagateDeps = false })
	waitBindingGone(t, ns, "cfg-configmap")
	waitBinding(t, ns, rb.Name, "is released", func(b *workv1alpha2.ResourceBinding) bool {
		_, annotated := b.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]
		return !annotated && !controllerutil.ContainsFinalizer(b, workv1alpha2.BindingDependenciesDistributorFinalizer)
	})
}

// TestPolicyClaimingADependencyKeepsRequiredBy: when a policy later claims
// a dependency, the detector takes its attached binding over and keeps
// spec.requiredBy; the distributor then no longer deletes it.
func TestPolicyClaimingADependencyKeepsRequiredBy(t *testing.T) {
	ns := namespace(t, "claimed")
	configMap(t, ns, "cfg")
	rb := dependentBinding(t, deployment(t, ns, "web", podUsing("cfg", "", "")), targets("member1"))
	waitBinding(t, ns, "cfg-configmap", "is attached", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})

	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configs"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
		},
	})
	waitBinding(t, ns, "cfg-configmap", "is claimed with requiredBy kept", func(b *workv1alpha2.ResourceBinding) bool {
		return b.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "" && b.Spec.Placement != nil &&
			requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})

	if err := apiClient.Delete(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	waitBindingGone(t, ns, rb.Name)
	got := waitBinding(t, ns, "cfg-configmap", "is required by nothing", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 0
	})
	if got.DeletionTimestamp != nil || got.Spec.Placement == nil {
		t.Errorf("the claimed binding was released: deletion %v, placement %v", got.DeletionTimestamp, got.Spec.Placement)
	}
}

// TestLabelSelectedDependencies: dependencies named by a label selector
// follow the selection as ConfigMaps appear and change their labels.
func TestLabelSelectedDependencies(t *testing.T) {
	ns := namespace(t, "selector")
	labelled := func(name, app string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
		create(t, cm)
		return cm
	}
	a := labelled("a", "web")
	labelled("b", "other")
	rb := dependentBinding(t, deployment(t, ns, "web", podUsing("", "", ""), selectorAnnotation, "app=web"), targets("member1"))
	waitBinding(t, ns, "a-configmap", "is required by the Deployment", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})
	// The same sync that attached a saw b.
	if got, err := getBinding(t.Context(), ns, "b-configmap"); err != nil || got != nil {
		t.Errorf("an unselected ConfigMap was attached: %v (err %v)", got, err)
	}

	labelled("c", "web")
	waitBinding(t, ns, "c-configmap", "is required by the Deployment", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot(ns, rb.Name, "member1"))
	})

	a.Labels["app"] = "other"
	if err := apiClient.Update(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	waitBindingGone(t, ns, "a-configmap")
}

// TestInvalidDependencies: an interpreter answer naming no kind is reported
// on the template and changes nothing.
func TestInvalidDependencies(t *testing.T) {
	ns := namespace(t, "invalid")
	d := deployment(t, ns, "web", podUsing("", "", ""), invalidAnnotation, "")
	rb := dependentBinding(t, d, targets("member1"))
	waitEvent(t, ns, d.Name, flotillaevents.ReasonGetDependenciesFailed)
	got, err := getBinding(t.Context(), ns, rb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]; ok {
		t.Errorf("dependencies recorded from an invalid answer: %s", v)
	}
}
