package e2e

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

func newConfigMap() *corev1.ConfigMap { return &corev1.ConfigMap{} }

// configMap is a ConfigMap with one key.
func configMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"v": value}}
}

// hasValue: the member ConfigMap carries value under "v".
func hasValue(value string) func(*corev1.ConfigMap) bool {
	return func(got *corev1.ConfigMap) bool { return got.Data["v"] == value }
}

// claimedBy waits until the template is claimed by the PropagationPolicy
// named policy.
func claimedBy(t *testing.T, obj client.Object, policy string) {
	t.Helper()
	eventually(t, obj.GetName()+" claimed by "+policy, func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		return obj.GetAnnotations()[policyv1alpha1.PropagationPolicyNameAnnotation] == policy &&
			obj.GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "", nil
	})
}

// TestPolicyPriority: among the policies selecting a template, the highest
// explicit priority wins; without explicit priorities a selector by name
// beats one by label, which beats one by kind only.
func TestPolicyPriority(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-priority")
	byName := policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "explicit"}
	low := propagationPolicy(ns, "explicit-low", []string{"member1"}, byName)
	low.Spec.Priority = ptr.To[int32](1)
	high := propagationPolicy(ns, "explicit-high", []string{"member2"}, byName)
	high.Spec.Priority = ptr.To[int32](5)

	labelled := policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "implicit"}}}
	kindOnly := propagationPolicy(ns, "implicit-kind", []string{"member1"}, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})
	byLabel := propagationPolicy(ns, "implicit-label", []string{"member2"}, labelled)
	named := propagationPolicy(ns, "implicit-name", []string{"member3"}, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "implicit"})
	for _, p := range []client.Object{low, high, kindOnly, byLabel, named} {
		create(t, p)
	}

	explicit := configMap(ns, "explicit", "e")
	implicit := configMap(ns, "implicit", "i")
	implicit.Labels = map[string]string{"tier": "implicit"}
	byLabelOnly := configMap(ns, "by-label", "l")
	byLabelOnly.Labels = map[string]string{"tier": "implicit"}
	for _, cm := range []client.Object{explicit, implicit, byLabelOnly} {
		create(t, cm)
	}

	claimedBy(t, explicit, "explicit-high")
	claimedBy(t, implicit, "implicit-name")
	claimedBy(t, byLabelOnly, "implicit-label")
	inMembers(t, []string{"member2"}, client.ObjectKeyFromObject(explicit), newConfigMap, "explicit", hasValue("e"))
	inMembers(t, []string{"member3"}, client.ObjectKeyFromObject(implicit), newConfigMap, "implicit", hasValue("i"))
	inMembers(t, []string{"member2"}, client.ObjectKeyFromObject(byLabelOnly), newConfigMap, "by-label", hasValue("l"))
	absentFrom(t, []string{"member1", "member3"}, client.ObjectKeyFromObject(explicit), newConfigMap())
	absentFrom(t, []string{"member1", "member2"}, client.ObjectKeyFromObject(implicit), newConfigMap())
	absentFrom(t, []string{"member1", "member3"}, client.ObjectKeyFromObject(byLabelOnly), newConfigMap())
}

// TestPreemption: a template claimed by a policy stays with it when a
// higher-priority policy without preemption appears, and moves to a
// higher-priority policy with preemption Always.
func TestPreemption(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-preemption")
	selector := policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "contested"}
	low := propagationPolicy(ns, "low", []string{"member1"}, selector)
	create(t, low)
	cm := configMap(ns, "contested", "1")
	create(t, cm)
	claimedBy(t, cm, "low")
	inMembers(t, []string{"member1"}, client.ObjectKeyFromObject(cm), newConfigMap, "contested under low", hasValue("1"))

	polite := propagationPolicy(ns, "polite", []string{"member2"}, selector)
	polite.Spec.Priority = ptr.To[int32](10)
	create(t, polite)
	// The detector syncs the template again for the new policy; a template
	// change after it, seen in member1, shows it has decided.
	update(t, cm, func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
	inMembers(t, []string{"member1"}, client.ObjectKeyFromObject(cm), newConfigMap, "the change under low", hasValue("2"))
	staysSo(t, "contested still claimed by low", func(ctx context.Context) (bool, error) {
		var got corev1.ConfigMap
		if err := cp.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
			return false, err
		}
		return got.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] == "low", nil
	})
	absentFrom(t, []string{"member2"}, client.ObjectKeyFromObject(cm), newConfigMap())

	eager := propagationPolicy(ns, "eager", []string{"member3"}, selector)
	eager.Spec.Priority = ptr.To[int32](20)
	eager.Spec.Preemption = policyv1alpha1.PreemptAlways
	create(t, eager)
	claimedBy(t, cm, "eager")
	inMembers(t, []string{"member3"}, client.ObjectKeyFromObject(cm), newConfigMap, "contested under eager", hasValue("2"))
	goneFrom(t, []string{"member1"}, client.ObjectKeyFromObject(cm), newConfigMap())
	eventually(t, "a PreemptPolicySucceed event on the template", func(ctx context.Context) (bool, error) {
		return templateEvent(ctx, cm, "PreemptPolicySucceed")
	})
}

// templateEvent reports whether an event with reason was recorded on obj.
func templateEvent(ctx context.Context, obj client.Object, reason string) (bool, error) {
	var list corev1.EventList
	if err := cp.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return false, err
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason {
			return true, nil
		}
	}
	return false, nil
}

// workOf returns the Work of the ConfigMap cm in cluster.
func workOf(ctx context.Context, cm *corev1.ConfigMap, cluster string) (*workv1alpha1.Work, error) {
	var work workv1alpha1.Work
	key := client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: names.Work(cm.Namespace, cm.Name, "ConfigMap")}
	if err := cp.Get(ctx, key, &work); err != nil {
		return nil, err
	}
	return &work, nil
}

// TestConflictResolution: a member object the federation did not create is
// left alone under conflictResolution Abort, with the Work saying why, and
// taken over once the policy says Overwrite.
func TestConflictResolution(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-conflict")
	m1 := member(t, "member1")
	local := configMap(ns, "shared", "member's own")
	if err := m1.Client.Create(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	policy := propagationPolicy(ns, "shared", []string{"member1"}, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "shared"})
	policy.Spec.ConflictResolution = policyv1alpha1.ConflictAbort
	create(t, policy)
	cm := configMap(ns, "shared", "federation's")
	create(t, cm)

	eventually(t, "the Work not applied, with the reason", func(ctx context.Context) (bool, error) {
		work, err := workOf(ctx, cm, "member1")
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		c := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == workv1alpha1.WorkReasonResourceConflict, nil
	})
	var got corev1.ConfigMap
	if err := m1.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatal(err)
	}
	if got.Data["v"] != "member's own" || got.Labels[workv1alpha1.ManagedByKarmadaLabel] != "" {
		t.Fatalf("Abort changed the member's ConfigMap: data %v labels %v", got.Data, got.Labels)
	}

	update(t, policy, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	})
	inMembers(t, []string{"member1"}, client.ObjectKeyFromObject(cm), newConfigMap, "the ConfigMap taken over", func(got *corev1.ConfigMap) bool {
		return got.Data["v"] == "federation's" && got.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
	})
	eventually(t, "the Work applied", func(ctx context.Context) (bool, error) {
		work, err := workOf(ctx, cm, "member1")
		if err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(work.Status.Conditions, workv1alpha1.WorkApplied), nil
	})
}

// TestSuspension: with dispatching suspended, template changes stop at the
// Works; resuming delivers them. Suspending one member holds back only
// that one.
func TestSuspension(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-suspension")
	policy := propagationPolicy(ns, "paused", nil, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "paused"})
	create(t, policy)
	cm := configMap(ns, "paused", "1")
	create(t, cm)
	key := client.ObjectKeyFromObject(cm)
	inMembers(t, allMembers(), key, newConfigMap, "v1", hasValue("1"))

	update(t, policy, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
	})
	suspended := func(cluster string, want bool) {
		t.Helper()
		eventually(t, "the Work in "+cluster+" suspended="+map[bool]string{true: "true", false: "false"}[want], func(ctx context.Context) (bool, error) {
			work, err := workOf(ctx, cm, cluster)
			if err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkDispatching)
			if want {
				return ptr.Deref(work.Spec.SuspendDispatching, false) && c != nil && c.Status == metav1.ConditionFalse &&
					c.Reason == workv1alpha1.WorkReasonSuspendDispatching, nil
			}
			return !ptr.Deref(work.Spec.SuspendDispatching, false) && (c == nil || c.Status == metav1.ConditionTrue), nil
		})
	}
	for _, name := range allMembers() {
		suspended(name, true)
	}
	update(t, cm, func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
	eventually(t, "v2 in the suspended Works", func(ctx context.Context) (bool, error) {
		for _, name := range allMembers() {
			work, err := workOf(ctx, cm, name)
			if err != nil {
				return false, err
			}
			if len(work.Spec.Workload.Manifests) != 1 || !containsValue(work.Spec.Workload.Manifests[0].Raw, "2") {
				return false, nil
			}
		}
		return true, nil
	})
	staysSo(t, "v1 in every member while suspended", func(ctx context.Context) (bool, error) {
		for _, m := range fed.Members {
			var got corev1.ConfigMap
			if err := m.Client.Get(ctx, key, &got); err != nil {
				return false, err
			}
			if got.Data["v"] != "1" {
				return false, nil
			}
		}
		return true, nil
	})

	// Resume everywhere but member2.
	update(t, policy, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Suspension = &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
	})
	inMembers(t, []string{"member1", "member3"}, key, newConfigMap, "v2 after resuming", hasValue("2"))
	suspended("member2", true)
	staysSo(t, "v1 in member2", func(ctx context.Context) (bool, error) {
		var got corev1.ConfigMap
		if err := member(t, "member2").Client.Get(ctx, key, &got); err != nil {
			return false, err
		}
		return got.Data["v"] == "1", nil
	})

	update(t, policy, func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Suspension = nil })
	suspended("member2", false)
	inMembers(t, []string{"member2"}, key, newConfigMap, "v2 in member2 after resuming it", hasValue("2"))
}

// containsValue reports whether a ConfigMap manifest carries value under
// "v".
func containsValue(raw []byte, value string) bool {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(raw, &cm); err != nil {
		return false
	}
	return cm.Data["v"] == value
}

// TestLazyActivation: a policy with activationPreference Lazy keeps a
// template where it is when the policy changes, until the template itself
// changes.
func TestLazyActivation(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-lazy")
	policy := propagationPolicy(ns, "lazy", []string{"member1"}, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"})
	policy.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	create(t, policy)
	old := configMap(ns, "old", "1")
	create(t, old)
	inMembers(t, []string{"member1"}, client.ObjectKeyFromObject(old), newConfigMap, "old", hasValue("1"))

	update(t, policy, func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	})
	// A template created after the change goes where the policy says now,
	// which shows the detector has the new policy.
	fresh := configMap(ns, "fresh", "1")
	create(t, fresh)
	inMembers(t, []string{"member2"}, client.ObjectKeyFromObject(fresh), newConfigMap, "fresh", hasValue("1"))
	staysSo(t, "old still in member1 only", func(ctx context.Context) (bool, error) {
		var got corev1.ConfigMap
		if err := member(t, "member1").Client.Get(ctx, client.ObjectKeyFromObject(old), &got); err != nil {
			return false, err
		}
		err := member(t, "member2").Client.Get(ctx, client.ObjectKeyFromObject(old), &got)
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})

	update(t, old, func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
	inMembers(t, []string{"member2"}, client.ObjectKeyFromObject(old), newConfigMap, "old moved on its change", hasValue("2"))
	goneFrom(t, []string{"member1"}, client.ObjectKeyFromObject(old), newConfigMap())
}
