package overrides

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// precision is Karmada's implicit priority of a policy for a resource: how
// exactly its best matching selector names the resource. Less precise
// policies are applied first so that more precise ones override them.
type precision int

const (
	// noMatch: no selector matches; also the precision of a policy without
	// selectors, which selects everything and so is the least precise.
	noMatch precision = iota
	// matchAll: a selector matches by apiVersion and kind (and namespace).
	matchAll
	// matchLabels: a selector matches by its labelSelector.
	matchLabels
	// matchName: a selector names the resource.
	matchName
)

// resource is what selectors look at, read from the template once per
// render rather than once per selector.
type resource struct {
	apiVersion, kind, namespace, name string
	labels                            objectLabels
}

func describe(obj *unstructured.Unstructured) resource {
	// Read in place: GetLabels would copy the map for every render.
	labels, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "labels")
	m, _ := labels.(map[string]any)
	return resource{
		apiVersion: obj.GetAPIVersion(),
		kind:       obj.GetKind(),
		namespace:  obj.GetNamespace(),
		name:       obj.GetName(),
		labels:     m,
	}
}

// labelSet is a set of labels as a selector reads them: a Cluster's typed
// labels or an unstructured template's.
type labelSet interface {
	get(key string) (string, bool)
}

type stringLabels map[string]string

func (l stringLabels) get(key string) (string, bool) {
	v, ok := l[key]
	return v, ok
}

type objectLabels map[string]any

func (l objectLabels) get(key string) (string, bool) {
	v, ok := l[key].(string)
	return v, ok
}

// selectPrecision reports whether selectors pick obj and how precisely.
func selectPrecision(obj *resource, selectors []policyv1alpha1.ResourceSelector) (precision, bool) {
	if len(selectors) == 0 {
		return noMatch, true
	}
	best := noMatch
	for i := range selectors {
		if p := selectorPrecision(obj, &selectors[i]); p > best {
			best = p
		}
	}
	return best, best != noMatch
}

// selectorPrecision follows Karmada: a name, when given, is all that counts
// (the labelSelector is then ignored); else the labelSelector; else the kind.
func selectorPrecision(obj *resource, rs *policyv1alpha1.ResourceSelector) precision {
	if rs.APIVersion != obj.apiVersion || rs.Kind != obj.kind ||
		(rs.Namespace != "" && rs.Namespace != obj.namespace) {
		return noMatch
	}
	switch {
	case rs.Name != "":
		if rs.Name == obj.name {
			return matchName
		}
		return noMatch
	case rs.LabelSelector != nil:
		if labelSelectorMatches(rs.LabelSelector, obj.labels) {
			return matchLabels
		}
		return noMatch
	default:
		return matchAll
	}
}

// clusterMatches reports whether a rule's targetCluster picks cluster. nil
// picks every cluster; otherwise every given criterion must hold and
// exclude beats them all.
func clusterMatches(a *policyv1alpha1.ClusterAffinity, cluster *clusterv1alpha1.Cluster) bool {
	if a == nil {
		return true
	}
	if contains(a.ExcludeClusters, cluster.Name) {
		return false
	}
	if a.LabelSelector != nil && !labelSelectorMatches(a.LabelSelector, stringLabels(cluster.Labels)) {
		return false
	}
	if a.FieldSelector != nil {
		for i := range a.FieldSelector.MatchExpressions {
			if !fieldMatches(&a.FieldSelector.MatchExpressions[i], cluster) {
				return false
			}
		}
	}
	return len(a.ClusterNames) == 0 || contains(a.ClusterNames, cluster.Name)
}

// fieldMatches evaluates one fieldSelector expression. provider and region
// behave like labels (NotIn holds when the field is empty). A cluster's zones
// are spec.zones plus the deprecated spec.zone; In needs every zone listed,
// NotIn needs none listed, as in Karmada's zone matching.
func fieldMatches(e *corev1.NodeSelectorRequirement, cluster *clusterv1alpha1.Cluster) bool {
	if e.Operator != corev1.NodeSelectorOpIn && e.Operator != corev1.NodeSelectorOpNotIn {
		return false
	}
	in := e.Operator == corev1.NodeSelectorOpIn
	switch e.Key {
	case policyv1alpha1.ProviderField:
		return valueMatches(cluster.Spec.Provider, e.Values, in)
	case policyv1alpha1.RegionField:
		return valueMatches(cluster.Spec.Region, e.Values, in)
	case policyv1alpha1.ZoneField:
		zones := cluster.Spec.Zones
		if cluster.Spec.Zone != "" && !contains(zones, cluster.Spec.Zone) {
			zones = append(zones[:len(zones):len(zones)], cluster.Spec.Zone)
		}
		if in && len(zones) == 0 {
			return false
		}
		for _, z := range zones {
			if contains(e.Values, z) != in {
				return false
			}
		}
		return true
	}
	return false
}

func valueMatches(v string, values []string, in bool) bool {
	if v == "" {
		return !in
	}
	return contains(values, v) == in
}

// labelSelectorMatches evaluates a label selector without building a
// labels.Selector, which allocates and is on the per-cluster path. Like
// metav1.LabelSelectorAsSelector, an empty selector matches everything and a
// malformed expression matches nothing.
func labelSelectorMatches(sel *metav1.LabelSelector, set labelSet) bool {
	for k, v := range sel.MatchLabels {
		if got, ok := set.get(k); !ok || got != v {
			return false
		}
	}
	for i := range sel.MatchExpressions {
		e := &sel.MatchExpressions[i]
		v, has := set.get(e.Key)
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if len(e.Values) == 0 || !has || !contains(e.Values, v) {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if len(e.Values) == 0 || has && contains(e.Values, v) {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if len(e.Values) != 0 || !has {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if len(e.Values) != 0 || has {
				return false
			}
		default:
			return false
		}
	}
	return true
}
