package app

import (
	"context"

	"slices"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// The autoscaling and networking kinds: what only the webhook refuses is
// refused through the API server with its field paths, and the defaults
// are written.
func TestAutoscalingAndNetworkingRefused(t *testing.T) {
	ctx := t.Context()
	nginx := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	tests := []struct {
		name    string
		obj     client.Object
		webhook string
		want    []string
	}{
		{
			name: "FederatedHPA with a metric of another source than its type",
			obj: &autoscalingv1alpha1.FederatedHPA{
				ObjectMeta: metav1.ObjectMeta{Name: "mismatched", Namespace: "default"},
				Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: nginx, MaxReplicas: 5, Metrics: []autoscalingv2.MetricSpec{{
					Type: autoscalingv2.PodsMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}},
				}}},
			},
			webhook: "federatedhpa.karmada.io",
			want:    []string{"spec.metrics[0].pods", "spec.metrics[0].resource"},
		},
		{
			name: "CronFederatedHPA with a bad schedule and a repeated rule name",
			obj: &autoscalingv1alpha1.CronFederatedHPA{
				ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default"},
				Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: nginx, Rules: []autoscalingv1alpha1.CronFederatedHPARule{
					{Name: "down", Schedule: "0 25 * * *", TargetReplicas: ptr.To[int32](1)},
					{Name: "down", Schedule: "0 7 * * *", TargetReplicas: ptr.To[int32](5)},
				}},
			},
			webhook: "cronfederatedhpa.karmada.io",
			want:    []string{"spec.rules[0].schedule", "spec.rules[1].name"},
		},
		{
			name: "MultiClusterService with a repeated port name and a bad cluster name",
			obj: &networkingv1alpha1.MultiClusterService{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: networkingv1alpha1.MultiClusterServiceSpec{
					Types:            []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
					Ports:            []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}, {Name: "http", Port: 8080}},
					ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "Member_1"}},
				},
			},
			webhook: "multiclusterservice.karmada.io",
			want:    []string{"spec.ports[1].name", "spec.providerClusters[0].name"},
		},
		{
			name: "MultiClusterIngress with a relative path",
			obj: &networkingv1alpha1.MultiClusterIngress{
				ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "default"},
				Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop.example.com",
					IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
						Path: "cart", PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web",
							Port: networkingv1.ServiceBackendPort{Number: 80}}},
					}}}},
				}}},
			},
			webhook: "multiclusteringress.karmada.io",
			want:    []string{"spec.rules[0].http.paths[0].path"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := cp.Create(ctx, tc.obj)
			if got := invalidFields(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("fields %v, want %v", got, tc.want)
			}
			if !strings.Contains(err.Error(), `admission webhook "`+tc.webhook+`" denied the request`) {
				t.Errorf("error %q does not come from the webhook %s", err, tc.webhook)
			}
		})
	}

	// The defaults reach the stored objects.
	fhpa := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: nginx, MaxReplicas: 5,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}},
	}
	if err := cp.Create(ctx, fhpa); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), fhpa) })
	got := &autoscalingv1alpha1.FederatedHPA{}
	if err := cp.Get(ctx, client.ObjectKeyFromObject(fhpa), got); err != nil {
		t.Fatal(err)
	}
	if s := got.Spec; s.MinReplicas == nil || *s.MinReplicas != 1 || len(s.Metrics) != 1 || s.Metrics[0].Resource == nil ||
		s.Behavior.ScaleUp == nil || len(s.Behavior.ScaleUp.Policies) != 2 || s.Behavior.ScaleDown == nil || len(s.Behavior.ScaleDown.Policies) != 1 {
		t.Errorf("FederatedHPA not defaulted: %+v", s)
	}
	mcs := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster}},
	}
	if err := cp.Create(ctx, mcs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), mcs) })
	if mcs.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] == "" {
		t.Error("MultiClusterService got no permanent id")
	}
	mcs.Spec.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
	if got := invalidFields(t, cp.Update(ctx, mcs)); !slices.Equal(got, []string{"spec.types"}) {
		t.Errorf("changing types: fields %v", got)
	}
}
