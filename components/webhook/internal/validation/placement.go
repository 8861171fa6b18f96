package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Placement checks a policy's placement.
func Placement(p *policyv1alpha1.Placement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.ClusterAffinity != nil && len(p.ClusterAffinities) > 0 {
		errs = append(errs, field.Forbidden(path.Child("clusterAffinities"), "may not be set together with clusterAffinity"))
	}
	errs = append(errs, ClusterAffinity(p.ClusterAffinity, path.Child("clusterAffinity"))...)
	errs = append(errs, clusterAffinities(p.ClusterAffinities, path.Child("clusterAffinities"))...)
	errs = append(errs, tolerations(p.ClusterTolerations, path.Child("clusterTolerations"))...)
	errs = append(errs, spreadConstraints(p.SpreadConstraints, path.Child("spreadConstraints"))...)
	errs = append(errs, replicaScheduling(p.ReplicaScheduling, path.Child("replicaScheduling"))...)
	errs = append(errs, workloadAffinity(p.WorkloadAffinity, path.Child("workloadAffinity"))...)
	return errs
}

// ClusterAffinity checks a cluster affinity: a valid label selector and a
// field selector on provider, region or zone with In or NotIn.
func ClusterAffinity(a *policyv1alpha1.ClusterAffinity, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(a.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
	}
	if a.FieldSelector != nil {
		exprs := path.Child("fieldSelector", "matchExpressions")
		for i, e := range a.FieldSelector.MatchExpressions {
			switch e.Key {
			case policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField:
			default:
				errs = append(errs, field.NotSupported(exprs.Index(i).Child("key"), e.Key,
					[]string{policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField}))
			}
			switch e.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			default:
				errs = append(errs, field.NotSupported(exprs.Index(i).Child("operator"), e.Operator,
					[]corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}))
			}
		}
	}
	return errs
}

func clusterAffinities(terms []policyv1alpha1.ClusterAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i := range terms {
		t := &terms[i]
		p := path.Index(i)
		errs = append(errs, affinityName(t.AffinityName, seen, p.Child("affinityName"))...)
		errs = append(errs, ClusterAffinity(&t.ClusterAffinity, p)...)
		overflowSeen := sets.New[string]()
		for j := range t.OverflowAffinities {
			o := &t.OverflowAffinities[j]
			op := p.Child("overflowAffinities").Index(j)
			errs = append(errs, affinityName(o.AffinityName, overflowSeen, op.Child("affinityName"))...)
			errs = append(errs, ClusterAffinity(&o.ClusterAffinity, op)...)
		}
	}
	return errs
}

func affinityName(name string, seen sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(path, name))
	}
	seen.Insert(name)
	return errs
}

// tolerations follows the rules Kubernetes applies to pod tolerations.
func tolerations(ts []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" {
			for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
			if t.Key == "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty"))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
		}
	}
	return errs
}

// spreadConstraints: spreadByField and spreadByLabel exclusive, group
// bounds consistent, each field at most once, and a cluster constraint
// whenever another field is spread by.
func spreadConstraints(cs []policyv1alpha1.SpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	fields := map[policyv1alpha1.SpreadFieldValue]bool{}
	for i, c := range cs {
		p := path.Index(i)
		if c.SpreadByField != "" && c.SpreadByLabel != "" {
			errs = append(errs, field.Forbidden(p.Child("spreadByLabel"), "may not be set together with spreadByField"))
		}
		if c.SpreadByLabel != "" {
			for _, msg := range utilvalidation.IsQualifiedName(c.SpreadByLabel) {
				errs = append(errs, field.Invalid(p.Child("spreadByLabel"), c.SpreadByLabel, msg))
			}
		}
		if c.MinGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("minGroups"), c.MinGroups, "must be greater than or equal to 0"))
		}
		if c.MaxGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, "must be greater than or equal to 0"))
		}
		if c.MaxGroups > 0 && c.MaxGroups < c.MinGroups {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, fmt.Sprintf("must be greater than or equal to minGroups (%d)", c.MinGroups)))
		}
		if c.SpreadByField != "" {
			if fields[c.SpreadByField] {
				errs = append(errs, field.Duplicate(p.Child("spreadByField"), c.SpreadByField))
			}
			fields[c.SpreadByField] = true
		}
	}
	if len(fields) > 0 && !fields[policyv1alpha1.SpreadByFieldCluster] {
		errs = append(errs, field.Required(path, "a constraint with spreadByField cluster is required when spreading by region, zone or provider"))
	}
	return errs
}

func replicaScheduling(s *policyv1alpha1.ReplicaSchedulingStrategy, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && s.ReplicaDivisionPreference == "" {
		errs = append(errs, field.Required(path.Child("replicaDivisionPreference"), "required when replicaSchedulingType is Divided"))
	}
	if w := s.WeightPreference; w != nil {
		wp := path.Child("weightPreference")
		if len(w.StaticWeightList) > 0 && w.DynamicWeight != "" {
			errs = append(errs, field.Forbidden(wp.Child("dynamicWeight"), "may not be set together with staticWeightList"))
		}
		for i := range w.StaticWeightList {
			sw := &w.StaticWeightList[i]
			p := wp.Child("staticWeightList").Index(i)
			if sw.Weight < 1 {
				errs = append(errs, field.Invalid(p.Child("weight"), sw.Weight, "must be at least 1"))
			}
			errs = append(errs, ClusterAffinity(&sw.TargetCluster, p.Child("targetCluster"))...)
		}
	}
	return errs
}

func workloadAffinity(w *policyv1alpha1.WorkloadAffinity, path *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	check := func(key string, p *field.Path) {
		for _, msg := range utilvalidation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(p, key, msg))
		}
	}
	if w.Affinity != nil {
		check(w.Affinity.GroupByLabelKey, path.Child("affinity", "groupByLabelKey"))
	}
	if w.AntiAffinity != nil {
		check(w.AntiAffinity.GroupByLabelKey, path.Child("antiAffinity", "groupByLabelKey"))
	}
	return errs
}
