package validation

import (
	"fmt"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// PolicyNameMaxLength bounds the name of a (Cluster)PropagationPolicy: it is
// written into the label values and annotations of the templates it claims.
const PolicyNameMaxLength = utilvalidation.LabelValueMaxLength

// PropagationSpec checks the spec of a PropagationPolicy or
// ClusterPropagationPolicy.
func PropagationSpec(spec *policyv1alpha1.PropagationSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ResourceSelectors(spec.ResourceSelectors, path.Child("resourceSelectors"))...)
	if spec.Preemption == policyv1alpha1.PreemptAlways {
		// A selector without a name could take over every template of its
		// kind from the policies that claimed them.
		for i, s := range spec.ResourceSelectors {
			if s.Name == "" {
				errs = append(errs, field.Required(path.Child("resourceSelectors").Index(i).Child("name"), "required when preemption is Always"))
			}
		}
	}
	errs = append(errs, Placement(&spec.Placement, path.Child("placement"))...)
	if spec.Failover != nil && spec.Failover.Application != nil && !spec.PropagateDeps {
		errs = append(errs, field.Invalid(path.Child("propagateDeps"), spec.PropagateDeps, "must be true when application failover is set"))
	}
	errs = append(errs, failover(spec.Failover, path.Child("failover"))...)
	if s := spec.Suspension; s != nil && s.Dispatching != nil && *s.Dispatching &&
		s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) > 0 {
		errs = append(errs, field.Forbidden(path.Child("suspension", "dispatchingOnClusters"), "may not be set when dispatching is true"))
	}
	return errs
}

// ResourceSelectors checks the apiVersion, kind and label selector of each
// selector.
func ResourceSelectors(selectors []policyv1alpha1.ResourceSelector, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range selectors {
		p := path.Index(i)
		if s.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), ""))
		} else if _, err := schema.ParseGroupVersion(s.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion, err.Error()))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
		if s.Namespace != "" {
			for _, msg := range utilvalidation.IsDNS1123Label(s.Namespace) {
				errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
			}
		}
		if s.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(s.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		}
	}
	return errs
}

func failover(f *policyv1alpha1.FailoverBehavior, path *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if a := f.Application; a != nil {
		p := path.Child("application")
		if t := a.DecisionConditions.TolerationSeconds; t != nil && *t < 0 {
			errs = append(errs, field.Invalid(p.Child("decisionConditions", "tolerationSeconds"), *t, "must be greater than or equal to 0"))
		}
		purge := a.PurgeMode
		if purge == "" {
			purge = policyv1alpha1.PurgeModeGracefully
		}
		switch {
		case purge == policyv1alpha1.PurgeModeGracefully && a.GracePeriodSeconds == nil:
			errs = append(errs, field.Required(p.Child("gracePeriodSeconds"), "required when purgeMode is Gracefully"))
		case purge != policyv1alpha1.PurgeModeGracefully && a.GracePeriodSeconds != nil:
			errs = append(errs, field.Forbidden(p.Child("gracePeriodSeconds"), "only applies when purgeMode is Gracefully"))
		case a.GracePeriodSeconds != nil && *a.GracePeriodSeconds <= 0:
			errs = append(errs, field.Invalid(p.Child("gracePeriodSeconds"), *a.GracePeriodSeconds, "must be greater than 0"))
		}
		errs = append(errs, statePreservation(a.StatePreservation, p.Child("statePreservation"))...)
	}
	if c := f.Cluster; c != nil {
		errs = append(errs, statePreservation(c.StatePreservation, path.Child("cluster", "statePreservation"))...)
	}
	return errs
}

func statePreservation(s *policyv1alpha1.StatePreservation, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range s.Rules {
		p := path.Child("rules").Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(r.AliasLabelName) {
			errs = append(errs, field.Invalid(p.Child("aliasLabelName"), r.AliasLabelName, msg))
		}
		if seen[r.AliasLabelName] {
			errs = append(errs, field.Duplicate(p.Child("aliasLabelName"), r.AliasLabelName))
		}
		seen[r.AliasLabelName] = true
		if err := jsonpath.New(r.AliasLabelName).Parse(r.JSONPath); err != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPath"), r.JSONPath, fmt.Sprintf("not a valid JSONPath: %v", err)))
		}
	}
	return errs
}
