package federatedhpa

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// The scaling rules Kubernetes gives a HorizontalPodAutoscaler's behavior
// direction that sets none (k8s.io/kubernetes pkg/apis/autoscaling/v2
// defaults).
const (
	// scaleUpPods and scaleUpPercent: scale up by at most 4 pods or 100%,
	// whichever is more, per scalePeriodSeconds.
	scaleUpPods    int32 = 4
	scaleUpPercent int32 = 100
	// scaleUpStabilizationWindowSeconds: scale up on the latest
	// recommendation.
	scaleUpStabilizationWindowSeconds int32 = 0
	// scaleDownPercent: scale down by at most 100% per scalePeriodSeconds.
	// Its stabilization window stays unset, as in Kubernetes: the
	// controller's own setting (5 minutes by default) applies.
	scaleDownPercent   int32 = 100
	scalePeriodSeconds int32 = 15
)

// Default fills in what Karmada fills in a FederatedHPA: minReplicas 1, a
// CPU utilization metric of 80% when there are no metrics, and, when
// behavior is set, Kubernetes' scaling rules for whatever it leaves out.
func Default(spec *autoscalingv1alpha1.FederatedHPASpec) {
	if spec.MinReplicas == nil {
		spec.MinReplicas = ptr.To(autoscalingv1alpha1.DefaultMinReplicas)
	}
	if len(spec.Metrics) == 0 {
		spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To(autoscalingv1alpha1.DefaultCPUUtilization),
				},
			},
		}}
	}
	if b := spec.Behavior; b != nil {
		b.ScaleUp = withDefaults(b.ScaleUp, autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: ptr.To(scaleUpStabilizationWindowSeconds),
			SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: scaleUpPods, PeriodSeconds: scalePeriodSeconds},
				{Type: autoscalingv2.PercentScalingPolicy, Value: scaleUpPercent, PeriodSeconds: scalePeriodSeconds},
			},
		})
		b.ScaleDown = withDefaults(b.ScaleDown, autoscalingv2.HPAScalingRules{
			SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PercentScalingPolicy, Value: scaleDownPercent, PeriodSeconds: scalePeriodSeconds},
			},
		})
	}
}

// withDefaults returns rules with each unset part taken from defaults.
func withDefaults(rules *autoscalingv2.HPAScalingRules, defaults autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if rules == nil {
		return &defaults
	}
	if rules.StabilizationWindowSeconds == nil {
		rules.StabilizationWindowSeconds = defaults.StabilizationWindowSeconds
	}
	if rules.SelectPolicy == nil {
		rules.SelectPolicy = defaults.SelectPolicy
	}
	if rules.Policies == nil {
		rules.Policies = defaults.Policies
	}
	return rules
}
