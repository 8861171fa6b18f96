// Package policymatch decides which PropagationPolicy or
// ClusterPropagationPolicy propagates a resource template: which policies
// select it, how specifically, and which of them claims it, taking priority
// and preemption into account. It is pure: the detector feeds it the
// template and the policies from its caches and acts on the answer.
package policymatch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Template is what selectors look at in a resource template.
type Template struct {
	APIVersion string
	Kind       string
	// Namespace is empty for cluster-scoped templates.
	Namespace string
	Name      string
	Labels    map[string]string
}

// ImplicitPriority says how specifically a policy selects a template; it
// breaks ties between policies of equal explicit priority.
type ImplicitPriority int

// Implicit priorities, from no match to the most specific selector.
const (
	// NoMatch: no selector of the policy selects the template.
	NoMatch ImplicitPriority = iota
	// MatchAll: a selector names the kind only.
	MatchAll
	// MatchLabelSelector: a selector's labelSelector matches.
	MatchLabelSelector
	// MatchName: a selector names the template.
	MatchName
)

// SelectorPriority tells whether sel selects t, and how specifically.
// policyNamespace is the namespace of a PropagationPolicy, which selects
// only templates of its own namespace; it is empty for a
// ClusterPropagationPolicy.
func SelectorPriority(policyNamespace string, sel policyv1alpha1.ResourceSelector, t Template) ImplicitPriority {
	if sel.APIVersion != t.APIVersion || sel.Kind != t.Kind {
		return NoMatch
	}
	if policyNamespace != "" && t.Namespace != policyNamespace {
		return NoMatch
	}
	if sel.Namespace != "" && sel.Namespace != t.Namespace {
		return NoMatch
	}
	// A name wins over a label selector given with it, as in Karmada.
	if sel.Name != "" {
		if sel.Name == t.Name {
			return MatchName
		}
		return NoMatch
	}
	if sel.LabelSelector == nil {
		return MatchAll
	}
	s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
	if err != nil {
		// The webhook rejects such selectors; without it they select nothing.
		return NoMatch
	}
	if s.Matches(labels.Set(t.Labels)) {
		return MatchLabelSelector
	}
	return NoMatch
}

// Priority is the highest SelectorPriority among selectors.
func Priority(policyNamespace string, selectors []policyv1alpha1.ResourceSelector, t Template) ImplicitPriority {
	best := NoMatch
	for i := range selectors {
		if p := SelectorPriority(policyNamespace, selectors[i], t); p > best {
			best = p
		}
	}
	return best
}
