package federatedhpa

import (
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

// fhpa is a valid, fully defaulted FederatedHPA of a Deployment, changed by
// mutate.
func fhpa(mutate ...func(*autoscalingv1alpha1.FederatedHPASpec)) *autoscalingv1alpha1.FederatedHPA {
	f := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "apps"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    10,
			Metrics:        []autoscalingv2.MetricSpec{cpu(autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)})},
		},
	}
	for _, m := range mutate {
		m(&f.Spec)
	}
	return f
}

func cpu(target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: target}}
}

func quantity(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func TestDefault(t *testing.T) {
	h := NewDefaulter(admissiontest.Decoder())
	tests := []struct {
		name string
		obj  *autoscalingv1alpha1.FederatedHPA
		want admissiontest.Want
	}{
		{name: "complete", obj: fhpa()},
		{
			name: "minReplicas and metrics",
			obj:  fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas, s.Metrics = nil, nil }),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/minReplicas", Value: admissiontest.JSON(`1`)},
				{Operation: "add", Path: "/spec/metrics", Value: admissiontest.JSON(
					`[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]`)},
			}},
		},
		{
			name: "empty behavior gets Kubernetes' rules in both directions",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				s.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
			}),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/behavior/scaleUp", Value: admissiontest.JSON(`{"stabilizationWindowSeconds":0,"selectPolicy":"Max",` +
					`"policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]}`)},
				{Operation: "add", Path: "/spec/behavior/scaleDown", Value: admissiontest.JSON(`{"selectPolicy":"Max",` +
					`"policies":[{"type":"Percent","value":100,"periodSeconds":15}]}`)},
			}},
		},
		{
			name: "what a direction sets is kept",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				s.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect)},
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), Tolerance: quantity("50m"),
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}},
				}
			}),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/spec/behavior/scaleUp/stabilizationWindowSeconds", Value: admissiontest.JSON(`0`)},
				{Operation: "add", Path: "/spec/behavior/scaleUp/policies", Value: admissiontest.JSON(
					`[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]`)},
				{Operation: "add", Path: "/spec/behavior/scaleDown/selectPolicy", Value: admissiontest.JSON(`"Max"`)},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), tc.want)
		})
	}
}

// TestDefaultPatchesOnlySpec: a request without status gets no status from
// the defaulting, although the status type writes desiredReplicas always.
func TestDefaultPatchesOnlySpec(t *testing.T) {
	req := admissiontest.Create(fhpa())
	req.Object.Raw = []byte(`{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA","metadata":{"name":"nginx","namespace":"apps"},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"nginx"},"maxReplicas":3}}`)
	admissiontest.Check(t, NewDefaulter(admissiontest.Decoder()), req, admissiontest.Want{Patch: []jsonpatch.Operation{
		{Operation: "add", Path: "/spec/minReplicas", Value: admissiontest.JSON(`1`)},
		{Operation: "add", Path: "/spec/metrics", Value: admissiontest.JSON(
			`[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]`)},
	}})
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	spec := func(m func(*autoscalingv1alpha1.FederatedHPASpec)) *autoscalingv1alpha1.FederatedHPA { return fhpa(m) }
	tests := []struct {
		name string
		obj  *autoscalingv1alpha1.FederatedHPA
		want []string
	}{
		{name: "valid", obj: fhpa()},
		{name: "every metric source", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics = []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("100")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "requests"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("2k")}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceMemory, Container: "nginx",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("256Mi")}}},
			}
			s.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptr.To[int32](300), SelectPolicy: ptr.To(autoscalingv2.MinChangePolicySelect),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 60}}}}
		})},
		{name: "minReplicas above maxReplicas", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas = ptr.To[int32](11) }),
			want: []string{"spec.maxReplicas"}},
		{name: "replica bounds below 1", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas, s.MaxReplicas = ptr.To[int32](0), 0 }),
			want: []string{"spec.minReplicas", "spec.maxReplicas"}},
		{name: "scale target without kind, name not a path segment", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Name: "a/b"}
		}), want: []string{"spec.scaleTargetRef.kind", "spec.scaleTargetRef.name"}},
		{name: "metric type without its source, another source set", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics[0].Type = autoscalingv2.PodsMetricSourceType
		}), want: []string{"spec.metrics[0].pods", "spec.metrics[0].resource"}},
		{name: "metric without type", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.Metrics[0].Type = "" }),
			want: []string{"spec.metrics[0].type", "spec.metrics[0].resource"}},
		{name: "external metrics are not supported", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("1")}}}}
		}), want: []string{"spec.metrics[0].type"}},
		{name: "resource target: utilization or average value, positive", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics = []autoscalingv2.MetricSpec{
				cpu(autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}),
				cpu(autoscalingv2.MetricTarget{Type: "Percent", AverageUtilization: ptr.To[int32](0), AverageValue: quantity("-1")}),
			}
		}), want: []string{"spec.metrics[0].resource.target.averageUtilization", "spec.metrics[1].resource.target.type",
			"spec.metrics[1].resource.target.averageUtilization", "spec.metrics[1].resource.target.averageValue",
			"spec.metrics[1].resource.target.averageValue"}},
		{name: "resource names", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics[0].Resource.Name = "gpus"
			s.Metrics = append(s.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType,
				ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "example.com/gpu", Container: "Main_Container",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1")}}})
		}), want: []string{"spec.metrics[0].resource.name", "spec.metrics[1].containerResource.container"}},
		{name: "pods and object targets", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Metrics = []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "requests"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}},
			}
		}), want: []string{"spec.metrics[0].pods.metric.name", "spec.metrics[0].pods.metric.selector.matchLabels",
			"spec.metrics[0].pods.target.averageValue", "spec.metrics[1].object.describedObject.kind",
			"spec.metrics[1].object.describedObject.name", "spec.metrics[1].object.target.averageValue"}},
		{name: "behavior", obj: spec(func(s *autoscalingv1alpha1.FederatedHPASpec) {
			s.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To[autoscalingv2.ScalingPolicySelect]("Fastest"),
					Tolerance: quantity("-0.1")},
				ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Replicas", Value: 0, PeriodSeconds: 1801}}},
			}
		}), want: []string{"spec.behavior.scaleUp.stabilizationWindowSeconds", "spec.behavior.scaleUp.selectPolicy",
			"spec.behavior.scaleUp.tolerance", "spec.behavior.scaleUp.policies", "spec.behavior.scaleDown.policies[0].type",
			"spec.behavior.scaleDown.policies[0].value", "spec.behavior.scaleDown.policies[0].periodSeconds"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}
