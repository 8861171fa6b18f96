package bindingstatus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
)

// lbStatus is a member's load-balancer status with these ingress points.
func lbStatus(points ...map[string]any) map[string]any {
	ingress := make([]any, len(points))
	for i, p := range points {
		ingress[i] = p
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": ingress}}
}

// The template of a LoadBalancer Service, and of an Ingress, shows the
// members' ingress points appended, de-duplicated and sorted, each with
// the hostname its member wrote (none when it wrote none), as Karmada
// aggregates them.
func TestLoadBalancerIngressAggregated(t *testing.T) {
	start(t, 2, 0)
	ns := namespace(t, "loadbalancer")
	// As members' API servers report them: ipMode defaulted with an ip.
	member1 := lbStatus(map[string]any{"ip": "10.0.0.2", "ipMode": "VIP"}, map[string]any{"ip": "10.0.0.1", "ipMode": "VIP"})
	member2 := lbStatus(map[string]any{"hostname": "lb.example.com"}, map[string]any{"ip": "10.0.0.1", "ipMode": "VIP"})
	clusters := []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if err := apiClient.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	svcRB := scheduledBinding(t, ref(svc, "v1", "Service"), 0, clusters...)
	svcGVK := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	reportApplied(t, createWork(t, binding.ViewOf(svcRB), "member1"), svcGVK, "services", member1)
	reportApplied(t, createWork(t, binding.ViewOf(svcRB), "member2"), svcGVK, "services", member2)
	vip := ptr.To(corev1.LoadBalancerIPModeVIP)
	wantSvc := []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "10.0.0.1", IPMode: vip}, {IP: "10.0.0.2", IPMode: vip}}
	waitFor(t, "the Service's load-balancer ingress is the members' merged", func(ctx context.Context) (bool, error) {
		got := &corev1.Service{}
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
			return false, err
		}
		if diff := cmp.Diff(wantSvc, got.Status.LoadBalancer.Ingress); diff != "" {
			return false, fmt.Errorf("ingress (-want +got):\n%s", diff)
		}
		return true, nil
	})

	pathType := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: "web.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pathType,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	if err := apiClient.Create(t.Context(), ing); err != nil {
		t.Fatal(err)
	}
	ingRB := scheduledBinding(t, ref(ing, "networking.k8s.io/v1", "Ingress"), 0, clusters...)
	ingGVK := schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	// An Ingress's points have no ipMode.
	ingMember1 := lbStatus(map[string]any{"ip": "10.0.0.2"}, map[string]any{"ip": "10.0.0.1"})
	ingMember2 := lbStatus(map[string]any{"hostname": "lb.example.com"}, map[string]any{"ip": "10.0.0.1"})
	reportApplied(t, createWork(t, binding.ViewOf(ingRB), "member1"), ingGVK, "ingresses", ingMember1)
	reportApplied(t, createWork(t, binding.ViewOf(ingRB), "member2"), ingGVK, "ingresses", ingMember2)
	wantIng := []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}}
	waitFor(t, "the Ingress's load-balancer ingress is the members' merged", func(ctx context.Context) (bool, error) {
		got := &networkingv1.Ingress{}
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(ing), got); err != nil {
			return false, err
		}
		if diff := cmp.Diff(wantIng, got.Status.LoadBalancer.Ingress); diff != "" {
			return false, fmt.Errorf("ingress (-want +got):\n%s", diff)
		}
		return true, nil
	})
}
