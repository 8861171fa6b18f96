package federatedhpa

import (
	"fmt"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// Bounds of a HorizontalPodAutoscaler's behavior, as Kubernetes sets them.
const (
	maxPeriodSeconds              int32 = 1800
	maxStabilizationWindowSeconds int32 = 3600
)

// metricSourceTypes are the metric sources a FederatedHPA can follow.
// External metrics are refused, as Karmada refuses them: there is no single
// member cluster to read them from.
var metricSourceTypes = []autoscalingv2.MetricSourceType{
	autoscalingv2.ContainerResourceMetricSourceType,
	autoscalingv2.ObjectMetricSourceType,
	autoscalingv2.PodsMetricSourceType,
	autoscalingv2.ResourceMetricSourceType,
}

var (
	metricTargetTypes = []autoscalingv2.MetricTargetType{
		autoscalingv2.AverageValueMetricType, autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType,
	}
	selectPolicies = []autoscalingv2.ScalingPolicySelect{
		autoscalingv2.DisabledPolicySelect, autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect,
	}
	scalingPolicyTypes = []autoscalingv2.HPAScalingPolicyType{
		autoscalingv2.PercentScalingPolicy, autoscalingv2.PodsScalingPolicy,
	}
)

// Validate checks a FederatedHPA's spec, once defaulted: replica bounds,
// the scale target, the metrics and the behavior.
func Validate(spec *autoscalingv1alpha1.FederatedHPASpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < 1 {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to minReplicas"))
	}
	errs = append(errs, ScaleTargetRef(spec.ScaleTargetRef, path.Child("scaleTargetRef"))...)
	for i := range spec.Metrics {
		errs = append(errs, metric(&spec.Metrics[i], path.Child("metrics").Index(i))...)
	}
	if spec.Behavior != nil {
		errs = append(errs, scalingRules(spec.Behavior.ScaleUp, path.Child("behavior", "scaleUp"))...)
		errs = append(errs, scalingRules(spec.Behavior.ScaleDown, path.Child("behavior", "scaleDown"))...)
	}
	return errs
}

// ScaleTargetRef checks a reference to the object scaled: kind and name set,
// and usable in a URL path.
func ScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, path *field.Path) field.ErrorList {
	errs := pathSegment(ref.Kind, path.Child("kind"))
	return append(errs, pathSegment(ref.Name, path.Child("name"))...)
}

func pathSegment(value string, path *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// metric checks one metric: a supported type whose source, and only that
// source, is set and well formed.
func metric(m *autoscalingv2.MetricSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	sources := []struct {
		typ  autoscalingv2.MetricSourceType
		name string
		set  bool
	}{
		{autoscalingv2.ObjectMetricSourceType, "object", m.Object != nil},
		{autoscalingv2.PodsMetricSourceType, "pods", m.Pods != nil},
		{autoscalingv2.ResourceMetricSourceType, "resource", m.Resource != nil},
		{autoscalingv2.ContainerResourceMetricSourceType, "containerResource", m.ContainerResource != nil},
		{autoscalingv2.ExternalMetricSourceType, "external", m.External != nil},
	}
	switch {
	case m.Type == "":
		errs = append(errs, field.Required(path.Child("type"), "must specify a metric source type"))
	case !slices.Contains(metricSourceTypes, m.Type):
		errs = append(errs, field.NotSupported(path.Child("type"), m.Type, metricSourceTypes))
	}
	for _, s := range sources {
		switch {
		case s.typ == m.Type && !s.set:
			errs = append(errs, field.Required(path.Child(s.name), "must populate information for the given metric source"))
		case s.typ != m.Type && s.set:
			errs = append(errs, field.Forbidden(path.Child(s.name), "must populate the given metric source only"))
		}
	}
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		if o := m.Object; o != nil {
			p := path.Child("object")
			errs = append(errs, ScaleTargetRef(o.DescribedObject, p.Child("describedObject"))...)
			errs = append(errs, metricIdentifier(o.Metric, p.Child("metric"))...)
			errs = append(errs, metricTarget(o.Target, p.Child("target"))...)
			if o.Target.Value == nil && o.Target.AverageValue == nil {
				errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
			}
		}
	case autoscalingv2.PodsMetricSourceType:
		if pods := m.Pods; pods != nil {
			p := path.Child("pods")
			errs = append(errs, metricIdentifier(pods.Metric, p.Child("metric"))...)
			errs = append(errs, metricTarget(pods.Target, p.Child("target"))...)
			if pods.Target.AverageValue == nil {
				errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
			}
		}
	case autoscalingv2.ResourceMetricSourceType:
		if r := m.Resource; r != nil {
			errs = append(errs, resourceSource(r.Name, r.Target, path.Child("resource"))...)
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		if r := m.ContainerResource; r != nil {
			p := path.Child("containerResource")
			errs = append(errs, resourceSource(r.Name, r.Target, p)...)
			if r.Container == "" {
				errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
			} else {
				for _, msg := range utilvalidation.IsDNS1123Label(r.Container) {
					errs = append(errs, field.Invalid(p.Child("container"), r.Container, msg))
				}
			}
		}
	}
	return errs
}

// resourceSource checks a resource metric of pods or of one of their
// containers: a container resource name and a target utilization or
// average value, not both.
func resourceSource(name corev1.ResourceName, target autoscalingv2.MetricTarget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, containerResourceName(string(name), path.Child("name"))...)
	}
	errs = append(errs, metricTarget(target, path.Child("target"))...)
	switch {
	case target.AverageUtilization == nil && target.AverageValue == nil:
		errs = append(errs, field.Required(path.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	case target.AverageUtilization != nil && target.AverageValue != nil:
		errs = append(errs, field.Forbidden(path.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

// containerResourceName accepts what a container may request: a qualified
// name, which without a domain is cpu, memory, ephemeral-storage or a
// hugepages size.
func containerResourceName(name string, path *field.Path) field.ErrorList {
	msgs := utilvalidation.IsQualifiedName(name)
	errs := make(field.ErrorList, 0, len(msgs))
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 || strings.Contains(name, "/") {
		return errs
	}
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return nil
	}
	if strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, name, "must be a standard resource for containers")}
}

func metricIdentifier(id autoscalingv2.MetricIdentifier, path *field.Path) field.ErrorList {
	errs := pathSegment(id.Name, path.Child("name"))
	if id.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(id.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	return errs
}

func metricTarget(t autoscalingv2.MetricTarget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case t.Type == "":
		errs = append(errs, field.Required(path.Child("type"), "must specify a metric target type"))
	case !slices.Contains(metricTargetTypes, t.Type):
		errs = append(errs, field.NotSupported(path.Child("type"), t.Type, metricTargetTypes))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(path.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(path.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(path.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

// scalingRules checks the rules of one direction of behavior.
func scalingRules(rules *autoscalingv2.HPAScalingRules, path *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var errs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindowSeconds) {
		errs = append(errs, field.Invalid(path.Child("stabilizationWindowSeconds"), *w,
			fmt.Sprintf("must be between 0 and %d", maxStabilizationWindowSeconds)))
	}
	if s := rules.SelectPolicy; s != nil && !slices.Contains(selectPolicies, *s) {
		errs = append(errs, field.NotSupported(path.Child("selectPolicy"), *s, selectPolicies))
	}
	if t := rules.Tolerance; t != nil && t.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("tolerance"), t.String(), "must be greater than or equal to 0"))
	}
	if len(rules.Policies) == 0 {
		errs = append(errs, field.Required(path.Child("policies"), "must specify at least one policy"))
	}
	for i, p := range rules.Policies {
		pp := path.Child("policies").Index(i)
		if !slices.Contains(scalingPolicyTypes, p.Type) {
			errs = append(errs, field.NotSupported(pp.Child("type"), p.Type, scalingPolicyTypes))
		}
		if p.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), p.Value, "must be greater than 0"))
		}
		if p.PeriodSeconds <= 0 || p.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), p.PeriodSeconds,
				fmt.Sprintf("must be between 1 and %d", maxPeriodSeconds)))
		}
	}
	return errs
}
