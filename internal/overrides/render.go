package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Match is one override rule that applies to a template in a cluster.
type Match struct {
	Policy PolicyRef
	// Rule indexes the policy's spec.overrideRules, or is DeprecatedRule for
	// the deprecated spec.targetCluster/spec.overriders pair.
	Rule int
	// Overriders points into the policy given to the Renderer.
	Overriders *policyv1alpha1.Overriders
}

// Renderer renders templates for member clusters through a fixed set of
// override policies. Build one per binding and call Apply for each scheduled
// cluster: what the policies need parsed is parsed once, on first use. It is
// safe for concurrent use. It keeps pointers into the policies it was given,
// which must not change while it is in use (informer caches never change
// their objects).
type Renderer struct {
	cluster    []*policy
	namespaced []*policy
}

// NewRenderer prepares ops (OverridePolicies; those outside a template's
// namespace are ignored for it) and cops (ClusterOverridePolicies).
func NewRenderer(ops []policyv1alpha1.OverridePolicy, cops []policyv1alpha1.ClusterOverridePolicy) *Renderer {
	r := &Renderer{
		cluster:    make([]*policy, len(cops)),
		namespaced: make([]*policy, len(ops)),
	}
	for i := range cops {
		ref := PolicyRef{Kind: KindClusterOverridePolicy, Name: cops[i].Name}
		r.cluster[i] = newPolicy(ref, &cops[i].Spec)
	}
	for i := range ops {
		ref := PolicyRef{Kind: KindOverridePolicy, Namespace: ops[i].Namespace, Name: ops[i].Name}
		r.namespaced[i] = newPolicy(ref, &ops[i].Spec)
	}
	return r
}

// Matching lists the rules that apply to obj in cluster, in the order Apply
// applies them.
func (r *Renderer) Matching(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster) []Match {
	if obj == nil || cluster == nil {
		return nil
	}
	return matches(r.matching(obj, cluster))
}

// Apply returns obj as it should be in cluster, with the applied rules
// recorded in the applied-overrides annotations, and the rules applied in
// order. obj is never changed. On failure it returns an *Error naming the
// policy, rule, overrider and path, and no object: rendering is all or
// nothing.
func (r *Renderer) Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster) (*unstructured.Unstructured, []Match, error) {
	if obj == nil || cluster == nil {
		return nil, nil, fmt.Errorf("render overrides: object and cluster are required")
	}
	rules := r.matching(obj, cluster)
	out := obj.DeepCopy()
	kind := out.GetKind()
	for _, rl := range rules {
		if err := rl.apply(out.Object, kind); err != nil {
			return nil, nil, err
		}
	}
	if err := recordApplied(out.Object, rules); err != nil {
		return nil, nil, fmt.Errorf("record applied overrides: %w", err)
	}
	return out, matches(rules), nil
}

// matching is ClusterOverridePolicies first, then OverridePolicies, so that
// the namespace's own policies have the last word. Cluster-scoped templates
// get no OverridePolicies, as in Karmada.
func (r *Renderer) matching(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster) []*rule {
	res := describe(obj)
	out := appendMatching(nil, r.cluster, &res, cluster)
	if res.namespace != "" {
		out = appendMatching(out, r.namespaced, &res, cluster)
	}
	return out
}

func matches(rules []*rule) []Match {
	if len(rules) == 0 {
		return nil
	}
	out := make([]Match, len(rules))
	for i, r := range rules {
		out[i] = Match{Policy: r.policy.ref, Rule: r.index, Overriders: r.overriders}
	}
	return out
}

// Apply renders obj for cluster through the OverridePolicies of its
// namespace and all ClusterOverridePolicies. See Renderer.Apply; use a
// Renderer to render one template for many clusters.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, ops []policyv1alpha1.OverridePolicy, cops []policyv1alpha1.ClusterOverridePolicy) (*unstructured.Unstructured, []Match, error) {
	return NewRenderer(ops, cops).Apply(obj, cluster)
}

// Matching lists, in application order, the rules of ops and cops that apply
// to obj in cluster.
func Matching(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, ops []policyv1alpha1.OverridePolicy, cops []policyv1alpha1.ClusterOverridePolicy) []Match {
	return NewRenderer(ops, cops).Matching(obj, cluster)
}

// Policies lists the policies of ms once each, in order of first
// application, e.g. for an event saying which policies shaped an object.
func Policies(ms []Match) []PolicyRef {
	var out []PolicyRef
	for _, m := range ms {
		if !containsRef(out, m.Policy) {
			out = append(out, m.Policy)
		}
	}
	return out
}

func containsRef(refs []PolicyRef, r PolicyRef) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}
