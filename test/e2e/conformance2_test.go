package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// The scenarios of issue 17, points 2 to 6: dependencies of workloads a
// ClusterPropagationPolicy claims, one dependency shared by workloads of
// policies that disagree, several customizations naming dependencies of one
// kind, permanent ids given late and ClusterPropagationPolicy selector
// edits. Each runs in namespaces and with names of its own.

// c2Deployment is a Deployment whose pods mount the ConfigMap configMap.
func c2Deployment(ns, name, configMap string) *appsv1.Deployment {
	d := deployment(ns, name, 1, "nginx")
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}},
	}}}
	return d
}

// c2Selector selects the Deployment called name.
func c2Selector(name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

// c2ClusterPolicy is a ClusterPropagationPolicy placing what selectors
// select on the named clusters, removed at the end of the test.
func c2ClusterPolicy(t *testing.T, name string, clusters []string, propagateDeps bool, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterPropagationPolicy {
	t.Helper()
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: selectors,
			PropagateDeps:     propagateDeps,
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
		},
	}
	create(t, cpp)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), cpp) })
	return cpp
}

// c2Customization creates a ResourceInterpreterCustomization for
// apiVersion/kind whose dependencyInterpretation names the ConfigMap in
// the template's annotation key, in the namespace of annotation
// key+"-namespace" or else the template's own; it is removed at the end
// of the test. The client knows no config.karmada.io types, hence
// unstructured.
func c2Customization(t *testing.T, name, apiVersion, kind, key string) {
	t.Helper()
	script := fmt.Sprintf(`function GetDependencies(desiredObj)
  local deps = {}
  local a = desiredObj.metadata.annotations
  if a == nil or a[%[1]q] == nil then
    return deps
  end
  local ns = a[%[1]q .. "-namespace"]
  if ns == nil then
    ns = desiredObj.metadata.namespace
  end
  deps[1] = {apiVersion = "v1", kind = "ConfigMap", namespace = ns, name = a[%[1]q]}
  return deps
end`, key)
	ric := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.karmada.io/v1alpha1",
		"kind":       "ResourceInterpreterCustomization",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"target": map[string]any{"apiVersion": apiVersion, "kind": kind},
			"customizations": map[string]any{
				"dependencyInterpretation": map[string]any{"luaScript": script},
			},
		},
	}}
	create(t, ric)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), ric) })
}

// newConfigMapIn is a ConfigMap with one key, for the dependency scenarios.
func newConfigMapIn(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": name}}
}

// TestClusterPolicyPropagatesDependencies (point 2): propagateDeps on a
// ClusterPropagationPolicy makes the dependencies of the namespaced
// workloads it claims follow them, and those of the cluster-scoped ones it
// claims through their ClusterResourceBindings, and moves them with a new
// placement.
func TestClusterPolicyPropagatesDependencies(t *testing.T) {
	t.Parallel()

	t.Run("namespaced workload", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, "c2-cpp-deps")
		cm := newConfigMapIn(ns, "c2-cpp-deps-config")
		create(t, cm)
		d := c2Deployment(ns, "c2-cpp-deps-app", cm.Name)
		create(t, d)
		// As a Karmada user writes it: by name, in no namespace in
		// particular, for a Deployment that existed before the policy.
		cpp := c2ClusterPolicy(t, "c2-cpp-deps-app", []string{"member1"}, true, c2Selector(d.Name))
		both := []client.Object{d, cm}
		depsPresent(t, []string{"member1"}, both)
		depsAbsent(t, "member2", both)

		update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
			p.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
		})
		depsPresent(t, []string{"member2"}, both)
		depsGone(t, []string{"member1"}, both)
	})

	t.Run("cluster-scoped workload", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, "c2-crb-deps")
		const key = "c2.e2e.flotilla.io/config"
		c2Customization(t, "c2-priorityclass-deps", "scheduling.k8s.io/v1", "PriorityClass", key)
		cm := newConfigMapIn(ns, "c2-crb-deps-config")
		create(t, cm)
		pc := &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "c2-crb-deps", Annotations: map[string]string{key: cm.Name, key + "-namespace": ns}},
			Value:      1000,
		}
		create(t, pc)
		t.Cleanup(func() { _ = cp.Delete(context.Background(), pc) })
		c2ClusterPolicy(t, "c2-crb-deps", []string{"member3"}, true, policyv1alpha1.ResourceSelector{
			APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: pc.Name,
		})
		inMembers(t, []string{"member3"}, client.ObjectKeyFromObject(pc), func() *schedulingv1.PriorityClass { return &schedulingv1.PriorityClass{} },
			"PriorityClass "+pc.Name, func(*schedulingv1.PriorityClass) bool { return true })
		depsPresent(t, []string{"member3"}, []client.Object{cm})
		depsAbsent(t, "member1", []client.Object{cm})

		attached := &workv1alpha2.ResourceBinding{}
		eventually(t, "the attached binding names the ClusterResourceBinding", func(ctx context.Context) (bool, error) {
			if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Binding(cm.Name, "ConfigMap")}, attached); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for _, s := range attached.Spec.RequiredBy {
				if s.Namespace == "" && s.Name == names.Binding(pc.Name, "PriorityClass") {
					return true, nil
				}
			}
			return false, nil
		})

		remove(t, pc)
		depsGone(t, []string{"member3"}, []client.Object{cm})
	})
}

// c2Settings are the settings of one policy in the conflict scenarios.
type c2Settings struct {
	conflictResolution policyv1alpha1.ConflictResolution
	preserve           bool
}

// c2ConflictPolicy is a PropagationPolicy with propagateDeps placing the
// Deployment name on member1 with s.
func c2ConflictPolicy(ns, name string, s c2Settings) *policyv1alpha1.PropagationPolicy {
	p := propagationPolicy(ns, name, []string{"member1"}, c2Selector(name))
	p.Spec.PropagateDeps = true
	p.Spec.ConflictResolution = s.conflictResolution
	p.Spec.PreserveResourcesOnDeletion = ptr.To(s.preserve)
	return p
}

// c2Conflict describes the conflict events of the attached binding.
type c2Conflict struct{ conflictResolution, preserve bool }

const (
	c2CRConflict       = "ConflictResolution conflicted (Overwrite vs Abort)"
	c2PreserveConflict = "PreserveResourcesOnDeletion conflicted (true vs false)"
)

// matches tells whether an event message reports exactly the conflicts c.
func (c c2Conflict) matches(msg string) bool {
	return strings.Contains(msg, c2CRConflict) == c.conflictResolution &&
		strings.Contains(msg, c2PreserveConflict) == c.preserve
}

// c2AttachedSettles waits until the attached binding ns/name holds want.
func c2AttachedSettles(t *testing.T, ns, name string, want c2Settings) {
	t.Helper()
	eventually(t, fmt.Sprintf("attached binding %s/%s holds %+v", ns, name, want), func(ctx context.Context) (bool, error) {
		rb := &workv1alpha2.ResourceBinding{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return rb.Spec.ConflictResolution == want.conflictResolution && ptr.Deref(rb.Spec.PreserveResourcesOnDeletion, false) == want.preserve, nil
	})
}

// c2LastConflict returns when a DependencyPolicyConflict on the binding
// ns/name was last observed by the controllers (zero: never). An event is
// written after it is observed, and repeats only update its series: the
// times say when, where the arrival of the event does not.
func c2LastConflict(ctx context.Context, ns, name string) (time.Time, error) {
	var list corev1.EventList
	if err := cp.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return time.Time{}, err
	}
	var last time.Time
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind != "ResourceBinding" || ev.InvolvedObject.Name != name || ev.Reason != "DependencyPolicyConflict" {
			continue
		}
		for _, t := range []time.Time{ev.EventTime.Time, ev.LastTimestamp.Time} {
			if t.After(last) {
				last = t
			}
		}
		if ev.Series != nil && ev.Series.LastObservedTime.After(last) {
			last = ev.Series.LastObservedTime.Time
		}
	}
	return last, nil
}

// TestSharedDependencyPolicyConflicts (point 3): two Deployments of
// different PropagationPolicies share a ConfigMap. The attached binding of
// the ConfigMap takes Overwrite when any says Overwrite and preservation
// when any preserves, and a DependencyPolicyConflict event names exactly
// the fields they disagree on; changing or deleting a policy so that
// nothing conflicts makes the values follow with no new conflict reported.
func TestSharedDependencyPolicyConflicts(t *testing.T) {
	t.Parallel()
	const (
		overwrite = policyv1alpha1.ConflictOverwrite
		abort     = policyv1alpha1.ConflictAbort
	)
	for _, tt := range []struct {
		name     string
		a, b     c2Settings
		conflict c2Conflict
		want     c2Settings
		// resolve, when set, changes or deletes policy B so that nothing
		// conflicts any more; then the binding holds resolved.
		resolve  func(t *testing.T, b *policyv1alpha1.PropagationPolicy)
		resolved c2Settings
	}{
		{
			name: "both fields", a: c2Settings{overwrite, true}, b: c2Settings{abort, false},
			conflict: c2Conflict{conflictResolution: true, preserve: true}, want: c2Settings{overwrite, true},
		},
		{
			name: "conflictResolution only", a: c2Settings{overwrite, false}, b: c2Settings{abort, false},
			conflict: c2Conflict{conflictResolution: true}, want: c2Settings{overwrite, false},
		},
		{
			name: "preserveResourcesOnDeletion only", a: c2Settings{overwrite, true}, b: c2Settings{overwrite, false},
			conflict: c2Conflict{preserve: true}, want: c2Settings{overwrite, true},
		},
		{
			name: "resolved by update", a: c2Settings{abort, true}, b: c2Settings{overwrite, false},
			conflict: c2Conflict{conflictResolution: true, preserve: true}, want: c2Settings{overwrite, true},
			resolve: func(t *testing.T, b *policyv1alpha1.PropagationPolicy) {
				update(t, b, func(p *policyv1alpha1.PropagationPolicy) {
					p.Spec.ConflictResolution = abort
					p.Spec.PreserveResourcesOnDeletion = ptr.To(true)
				})
			},
			resolved: c2Settings{abort, true},
		},
		{
			name: "resolved by deletion", a: c2Settings{abort, false}, b: c2Settings{overwrite, true},
			conflict: c2Conflict{conflictResolution: true, preserve: true}, want: c2Settings{overwrite, true},
			resolve:  func(t *testing.T, b *policyv1alpha1.PropagationPolicy) { remove(t, b) },
			resolved: c2Settings{abort, false},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "c2-conflict-"+strings.NewReplacer(" ", "-").Replace(strings.ToLower(tt.name)))
			cm := newConfigMapIn(ns, "shared")
			create(t, cm)
			for _, name := range []string{"app-a", "app-b"} {
				create(t, c2Deployment(ns, name, cm.Name))
			}
			create(t, c2ConflictPolicy(ns, "app-a", tt.a))
			b := c2ConflictPolicy(ns, "app-b", tt.b)
			create(t, b)
			attached := names.Binding(cm.Name, "ConfigMap")
			eventually(t, "the attached binding is required by both Deployments", func(ctx context.Context) (bool, error) {
				rb := &workv1alpha2.ResourceBinding{}
				if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: attached}, rb); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				return len(rb.Spec.RequiredBy) == 2, nil
			})
			c2AttachedSettles(t, ns, attached, tt.want)
			coreEvent(t, ns, "ResourceBinding", attached, "DependencyPolicyConflict", tt.conflict.matches)
			if tt.resolve == nil {
				return
			}

			tt.resolve(t, b)
			c2AttachedSettles(t, ns, attached, tt.resolved)
			// The controllers wrote the resolved values before this: a
			// conflict they observed later would be reported after the
			// conflict ended.
			settled := time.Now()
			staysSo(t, "no conflict is reported once resolved", func(ctx context.Context) (bool, error) {
				last, err := c2LastConflict(ctx, ns, attached)
				return !last.After(settled), err
			})
			depsPresent(t, []string{"member1"}, []client.Object{cm})
		})
	}
}

// TestDependenciesOfEveryCustomization (point 4): two
// ResourceInterpreterCustomizations of one kind each name a dependency;
// both dependencies follow the workload, not only the first
// customization's.
func TestDependenciesOfEveryCustomization(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "c2-ric-union")
	const first, second = "c2.e2e.flotilla.io/first", "c2.e2e.flotilla.io/second"
	// PodDisruptionBudgets name no dependencies of their own, so other
	// scenarios are not concerned.
	c2Customization(t, "c2-union-a", "policy/v1", "PodDisruptionBudget", first)
	c2Customization(t, "c2-union-b", "policy/v1", "PodDisruptionBudget", second)
	cmA, cmB := newConfigMapIn(ns, "c2-first"), newConfigMapIn(ns, "c2-second")
	create(t, cmA)
	create(t, cmB)
	pdb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy/v1",
		"kind":       "PodDisruptionBudget",
		"metadata": map[string]any{
			"namespace": ns, "name": "c2-union",
			"annotations": map[string]any{first: cmA.Name, second: cmB.Name},
		},
		"spec": map[string]any{
			"minAvailable": int64(1),
			"selector":     map[string]any{"matchLabels": map[string]any{"app": "c2-union"}},
		},
	}}
	create(t, pdb)
	p := propagationPolicy(ns, "c2-union", []string{"member2"}, policyv1alpha1.ResourceSelector{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Name: "c2-union"})
	p.Spec.PropagateDeps = true
	create(t, p)
	depsPresent(t, []string{"member2"}, []client.Object{cmA, cmB})
}

// TestLatePermanentIDs (point 5): without the webhook a policy gets its
// permanent id after its creation; a Deployment created right after its
// ClusterPropagationPolicy ends up, template and binding, with that id.
func TestLatePermanentIDs(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "c2-late-id")
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "c2-late-id"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	create(t, cpp)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), cpp) })
	d := deployment(ns, "c2-late-id", 1, "nginx")
	create(t, d)

	var id string
	eventually(t, "the policy's permanent id", func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(cpp), cpp); err != nil {
			return false, err
		}
		id = cpp.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]
		return id != "", nil
	})
	eventually(t, "the template carries the id", func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false, err
		}
		return d.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == id, nil
	})
	eventually(t, "the binding carries the id", func(ctx context.Context) (bool, error) {
		rb := &workv1alpha2.ResourceBinding{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Binding(d.Name, "Deployment")}, rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return rb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == id, nil
	})
	inMembers(t, []string{"member1"}, client.ObjectKeyFromObject(d), newDeployment, "Deployment "+d.Name, func(*appsv1.Deployment) bool { return true })
}

// c2ClaimedByCPP waits until the template obj is claimed by the
// ClusterPropagationPolicy name (claimed false: by none).
func c2ClaimedByCPP(t *testing.T, obj client.Object, name string, claimed bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s/%s claimed by %s: %t", obj.GetNamespace(), obj.GetName(), name, claimed), func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		got := obj.GetAnnotations()[policyv1alpha1.ClusterPropagationPolicyAnnotation] == name &&
			obj.GetLabels()[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != ""
		return got == claimed, nil
	})
}

// TestClusterPolicySelectorEdits (point 6): adding a selector to a
// ClusterPropagationPolicy and changing one claims and releases namespaced
// templates in every namespace.
func TestClusterPolicySelectorEdits(t *testing.T) {
	t.Parallel()
	namespaces := []string{namespace(t, "c2-selector-edits-1"), namespace(t, "c2-selector-edits-2")}
	deps := map[string][]*appsv1.Deployment{}
	for _, ns := range namespaces {
		for _, name := range []string{"c2-edit-a", "c2-edit-b", "c2-edit-c"} {
			d := deployment(ns, name, 1, "nginx")
			create(t, d)
			deps[name] = append(deps[name], d)
		}
	}
	cpp := c2ClusterPolicy(t, "c2-selector-edits", []string{"member2"}, false, c2Selector("c2-edit-a"))
	for _, d := range deps["c2-edit-a"] {
		c2ClaimedByCPP(t, d, cpp.Name, true)
	}

	update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ResourceSelectors = append(p.Spec.ResourceSelectors, c2Selector("c2-edit-b"))
	})
	for _, d := range deps["c2-edit-b"] {
		c2ClaimedByCPP(t, d, cpp.Name, true)
		inMembers(t, []string{"member2"}, client.ObjectKeyFromObject(d), newDeployment, "Deployment "+d.Name, func(*appsv1.Deployment) bool { return true })
	}

	update(t, cpp, func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ResourceSelectors[0] = c2Selector("c2-edit-c")
	})
	for _, d := range deps["c2-edit-c"] {
		c2ClaimedByCPP(t, d, cpp.Name, true)
	}
	for _, d := range deps["c2-edit-a"] {
		c2ClaimedByCPP(t, d, cpp.Name, false)
	}
	for _, d := range deps["c2-edit-b"] {
		c2ClaimedByCPP(t, d, cpp.Name, true)
	}
}
