// Package affinity decides whether a member cluster matches a
// ClusterAffinity: names, exclusions, a label selector and a selector on the
// provider, region and zone fields. Placement terms, overflow terms and
// static weight rules all use it, compiled once per scheduling cycle.
package affinity

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Matcher is a compiled ClusterAffinity. The zero value and nil match every
// cluster.
type Matcher struct {
	names    set
	exclude  set
	selector labels.Selector
	fields   []fieldRequirement
}

// set is a small string set: a slice scan beats hashing for the short lists
// placements usually carry, a map takes over for long ones.
type set struct {
	list []string
	m    map[string]struct{}
}

func newSet(items []string) set {
	if len(items) <= 16 {
		return set{list: items}
	}
	m := make(map[string]struct{}, len(items))
	for _, s := range items {
		m[s] = struct{}{}
	}
	return set{m: m}
}

func (s set) empty() bool { return len(s.list) == 0 && len(s.m) == 0 }

func (s set) has(v string) bool {
	if s.m != nil {
		_, ok := s.m[v]
		return ok
	}
	return slices.Contains(s.list, v)
}

type fieldRequirement struct {
	key      string
	operator corev1.NodeSelectorOperator
	values   set
}

// Compile turns a ClusterAffinity into a Matcher. A nil affinity matches all
// clusters. An invalid label selector is an error: the webhook should have
// refused it, and silently matching nothing would hide the mistake.
func Compile(a *policyv1alpha1.ClusterAffinity) (*Matcher, error) {
	if a == nil {
		return nil, nil
	}
	m := &Matcher{names: newSet(a.ClusterNames), exclude: newSet(a.ExcludeClusters)}
	if a.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("cluster affinity label selector: %w", err)
		}
		m.selector = sel
	}
	if a.FieldSelector != nil {
		for _, e := range a.FieldSelector.MatchExpressions {
			m.fields = append(m.fields, fieldRequirement{key: e.Key, operator: e.Operator, values: newSet(e.Values)})
		}
	}
	return m, nil
}

// Matches reports whether the cluster satisfies every criterion of the
// affinity; exclusion wins over all of them.
func (m *Matcher) Matches(c *clusterv1alpha1.Cluster) bool {
	if m == nil {
		return true
	}
	if m.exclude.has(c.Name) {
		return false
	}
	if !m.names.empty() && !m.names.has(c.Name) {
		return false
	}
	if m.selector != nil && !m.selector.Matches(labels.Set(c.Labels)) {
		return false
	}
	for i := range m.fields {
		if !m.fields[i].matches(c) {
			return false
		}
	}
	return true
}

func (r *fieldRequirement) matches(c *clusterv1alpha1.Cluster) bool {
	switch r.key {
	case policyv1alpha1.ProviderField:
		return matchValue(r, c.Spec.Provider)
	case policyv1alpha1.RegionField:
		return matchValue(r, c.Spec.Region)
	case policyv1alpha1.ZoneField:
		return matchZones(r, c)
	}
	// Unknown keys are refused by the schema; never matching is the safe
	// reading if one slips through.
	return false
}

func matchValue(r *fieldRequirement, v string) bool {
	switch r.operator {
	case corev1.NodeSelectorOpIn:
		return v != "" && r.values.has(v)
	case corev1.NodeSelectorOpNotIn:
		return !r.values.has(v)
	case corev1.NodeSelectorOpExists:
		return v != ""
	case corev1.NodeSelectorOpDoesNotExist:
		return v == ""
	}
	return false
}

// matchZones reads In as "the cluster lies entirely within these zones" and
// NotIn as "the cluster touches none of them", since a cluster may span
// several zones.
func matchZones(r *fieldRequirement, c *clusterv1alpha1.Cluster) bool {
	zones := c.Spec.Zones
	if len(zones) == 0 && c.Spec.Zone != "" {
		single := [1]string{c.Spec.Zone}
		zones = single[:]
	}
	switch r.operator {
	case corev1.NodeSelectorOpIn:
		if len(zones) == 0 {
			return false
		}
		for _, z := range zones {
			if !r.values.has(z) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpNotIn:
		for _, z := range zones {
			if r.values.has(z) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpExists:
		return len(zones) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(zones) == 0
	}
	return false
}

// Zones are the zones a cluster spans: spec.zones, or the deprecated
// spec.zone when zones is empty. It returns the cluster's own slice when it
// can, so callers must not modify the result.
func Zones(c *clusterv1alpha1.Cluster) []string {
	if len(c.Spec.Zones) > 0 {
		return c.Spec.Zones
	}
	if c.Spec.Zone != "" {
		return []string{c.Spec.Zone}
	}
	return nil
}
