package dependencies_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// claimedBinding is the binding of a Deployment mounting the ConfigMap
// cfg, claimed by a PropagationPolicy with the settings given.
func claimedBinding(t *testing.T, ns, name string, cr policyv1alpha1.ConflictResolution, preserve bool) *workv1alpha2.ResourceBinding {
	t.Helper()
	d := deployment(t, ns, name, podUsing("cfg", "", ""))
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      names.Binding(d.Name, "Deployment"),
			Labels: map[string]string{
				workv1alpha2.ResourceBindingPermanentIDLabel:     "id-" + ns + "-" + name,
				policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-" + name,
			},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{
				APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: d.Name, UID: d.UID, ResourceVersion: d.ResourceVersion,
			},
			Replicas:                    1,
			PropagateDeps:               true,
			Placement:                   &policyv1alpha1.Placement{},
			Clusters:                    targets("member1"),
			ConflictResolution:          cr,
			PreserveResourcesOnDeletion: ptr.To(preserve),
		},
	}
	create(t, rb)
	return rb
}

// conflictEvent waits for a DependencyPolicyConflict event on the binding
// ns/name with exactly message.
func conflictEvent(t *testing.T, ns, name, message string) {
	t.Helper()
	waitFor(t, "conflict event "+message, func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := apiClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == name && e.Reason == flotillaevents.ReasonDependencyPolicyConflict && e.Message == message {
				return true, nil
			}
		}
		return false, nil
	})
}

// TestConflictEventsAndReleasedDependents: the attached binding of a
// ConfigMap shared by bindings of different policies takes the resolved
// settings and says which fields conflict, in Karmada's words; a dependent
// whose policy is deleted (released) no longer has a say, so the values
// follow the claimed one's.
func TestConflictEventsAndReleasedDependents(t *testing.T) {
	ns := namespace(t, "conflict")
	configMap(t, ns, "cfg")
	claimedBinding(t, ns, "web", policyv1alpha1.ConflictAbort, false)
	api := claimedBinding(t, ns, "api", policyv1alpha1.ConflictOverwrite, true)

	attached := names.Binding("cfg", "ConfigMap")
	waitBinding(t, ns, attached, "resolves to Overwrite and preservation", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 2 && b.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite && ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false)
	})
	conflictEvent(t, ns, attached, "Dependency policy conflict detected: "+
		"ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false).")

	// The detector releases a binding whose policy is deleted: its claim
	// labels go, its spec stays.
	updateBinding(t, ns, api.Name, func(b *workv1alpha2.ResourceBinding) {
		delete(b.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
	})
	waitBinding(t, ns, attached, "follows the claimed dependent alone", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 2 && b.Spec.ConflictResolution == policyv1alpha1.ConflictAbort && !ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false)
	})
}

// TestConflictOnOneField: only the field that differs is reported.
func TestConflictOnOneField(t *testing.T) {
	ns := namespace(t, "conflict-one")
	configMap(t, ns, "cfg")
	claimedBinding(t, ns, "web", policyv1alpha1.ConflictOverwrite, false)
	claimedBinding(t, ns, "api", policyv1alpha1.ConflictOverwrite, true)
	attached := names.Binding("cfg", "ConfigMap")
	waitBinding(t, ns, attached, "preserves", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 2 && ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false)
	})
	conflictEvent(t, ns, attached, "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false).")
}

// TestClusterResourceBindingDependencies: a cluster-scoped template's
// ClusterResourceBinding with propagateDeps gets its dependencies attached
// like a ResourceBinding; they are rendered where it is scheduled, follow
// a new schedule and are released with it.
func TestClusterResourceBindingDependencies(t *testing.T) {
	ns := namespace(t, "crb")
	configMap(t, ns, "cfg")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name:        "deps-" + ns,
		Annotations: map[string]string{configMapAnnotation: ns + "/cfg"},
	}}
	create(t, role)
	t.Cleanup(func() { _ = apiClient.Delete(context.Background(), role) })
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:   names.Binding(role.Name, "ClusterRole"),
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id-" + role.Name},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{
				APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name, UID: role.UID, ResourceVersion: role.ResourceVersion,
			},
			PropagateDeps: true,
			Placement:     &policyv1alpha1.Placement{},
			Clusters:      targets("member2"),
		},
	}
	create(t, crb)

	attached := names.Binding("cfg", "ConfigMap")
	waitBinding(t, ns, attached, "requires the ClusterResourceBinding's schedule", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot("", crb.Name, "member2"))
	})
	waitFor(t, "the ConfigMap's Work in member2", func(ctx context.Context) (bool, error) {
		return cfgWorkExists(ctx, "member2", ns)
	})

	waitFor(t, "rescheduling the ClusterResourceBinding", func(ctx context.Context) (bool, error) {
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(crb), crb); err != nil {
			return false, err
		}
		crb.Spec.Clusters = targets("member3")
		return true, apiClient.Update(ctx, crb)
	})
	waitBinding(t, ns, attached, "follows the new schedule", func(b *workv1alpha2.ResourceBinding) bool {
		return requiredBy(b, snapshot("", crb.Name, "member3"))
	})

	if err := apiClient.Delete(t.Context(), crb); err != nil {
		t.Fatal(err)
	}
	waitBindingGone(t, ns, attached)
	waitFor(t, "the ClusterResourceBinding is gone", func(ctx context.Context) (bool, error) {
		err := apiClient.Get(ctx, client.ObjectKeyFromObject(crb), &workv1alpha2.ClusterResourceBinding{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestConflictThatChangesNoValue: a dependent turning to Abort while
// another says Overwrite leaves the attached binding as it is (Overwrite
// wins) but is a conflict all the same, and reported.
func TestConflictThatChangesNoValue(t *testing.T) {
	ns := namespace(t, "conflict-same")
	configMap(t, ns, "cfg")
	claimedBinding(t, ns, "web", policyv1alpha1.ConflictOverwrite, false)
	api := claimedBinding(t, ns, "api", policyv1alpha1.ConflictOverwrite, false)
	attached := names.Binding("cfg", "ConfigMap")
	waitBinding(t, ns, attached, "is required by both with Overwrite", func(b *workv1alpha2.ResourceBinding) bool {
		return len(b.Spec.RequiredBy) == 2 && b.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite
	})
	updateBinding(t, ns, api.Name, func(b *workv1alpha2.ResourceBinding) {
		b.Spec.ConflictResolution = policyv1alpha1.ConflictAbort
	})
	conflictEvent(t, ns, attached, "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort).")
}
