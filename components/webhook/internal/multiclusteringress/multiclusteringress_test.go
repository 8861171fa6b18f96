package multiclusteringress

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func service(name string, port networkingv1.ServiceBackendPort) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: port}}
}

func httpPath(path string, pathType networkingv1.PathType, backend networkingv1.IngressBackend) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: ptr.To(pathType), Backend: backend}
}

// mci routes shop.example.com to two Services, changed by mutate.
func mci(mutate ...func(*networkingv1.IngressSpec)) *networkingv1alpha1.MultiClusterIngress {
	m := &networkingv1alpha1.MultiClusterIngress{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "apps"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules: []networkingv1.IngressRule{{
				Host: "shop.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					httpPath("/", networkingv1.PathTypePrefix, service("web", networkingv1.ServiceBackendPort{Number: 80})),
					httpPath("/api", networkingv1.PathTypeExact, service("api", networkingv1.ServiceBackendPort{Name: "http"})),
				}}},
			}},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com", "*.example.com"}, SecretName: "shop-tls"}},
		},
	}
	for _, f := range mutate {
		f(&m.Spec)
	}
	return m
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	paths := func(s *networkingv1.IngressSpec) *[]networkingv1.HTTPIngressPath { return &s.Rules[0].HTTP.Paths }
	tests := []struct {
		name string
		obj  *networkingv1alpha1.MultiClusterIngress
		want []string
	}{
		{name: "valid", obj: mci()},
		{name: "default backend only, a resource", obj: mci(func(s *networkingv1.IngressSpec) {
			*s = networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
				Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("storage.example.com"), Kind: "Bucket", Name: "static"}}}
		})},
		{name: "wildcard host, implementation-specific empty path", obj: mci(func(s *networkingv1.IngressSpec) {
			s.Rules[0].Host = "*.example.com"
			*paths(s) = []networkingv1.HTTPIngressPath{httpPath("", networkingv1.PathTypeImplementationSpecific, service("web", networkingv1.ServiceBackendPort{Number: 80}))}
		})},
		{name: "neither rules nor default backend", obj: mci(func(s *networkingv1.IngressSpec) { *s = networkingv1.IngressSpec{} }),
			want: []string{"spec"}},
		{name: "hosts", obj: mci(func(s *networkingv1.IngressSpec) {
			s.Rules = append(s.Rules, networkingv1.IngressRule{Host: "10.0.0.1"}, networkingv1.IngressRule{Host: "shop.*.com"}, networkingv1.IngressRule{Host: "Shop_Example"})
			s.TLS[0].Hosts = append(s.TLS[0].Hosts, "**.example.com")
		}), want: []string{"spec.rules[1].host", "spec.rules[2].host", "spec.rules[3].host", "spec.tls[0].hosts[2]"}},
		{name: "http without paths", obj: mci(func(s *networkingv1.IngressSpec) { *paths(s) = nil }),
			want: []string{"spec.rules[0].http.paths"}},
		{name: "paths", obj: mci(func(s *networkingv1.IngressSpec) {
			backend := service("web", networkingv1.ServiceBackendPort{Number: 80})
			*paths(s) = []networkingv1.HTTPIngressPath{
				{Path: "/", Backend: backend},
				httpPath("relative", networkingv1.PathTypePrefix, backend),
				httpPath("/a//b", networkingv1.PathTypeExact, backend),
				httpPath("/a/..", networkingv1.PathTypePrefix, backend),
				httpPath("x", networkingv1.PathTypeImplementationSpecific, backend),
				httpPath("/", "Regex", backend),
			}
		}), want: []string{"spec.rules[0].http.paths[0].pathType", "spec.rules[0].http.paths[1].path", "spec.rules[0].http.paths[2].path",
			"spec.rules[0].http.paths[3].path", "spec.rules[0].http.paths[4].path", "spec.rules[0].http.paths[5].pathType"}},
		{name: "backends", obj: mci(func(s *networkingv1.IngressSpec) {
			both := service("web", networkingv1.ServiceBackendPort{Number: 80})
			both.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "static"}
			*paths(s) = []networkingv1.HTTPIngressPath{
				httpPath("/a", networkingv1.PathTypePrefix, both),
				httpPath("/b", networkingv1.PathTypePrefix, networkingv1.IngressBackend{}),
				httpPath("/c", networkingv1.PathTypePrefix, service("", networkingv1.ServiceBackendPort{Name: "http", Number: 80})),
				httpPath("/d", networkingv1.PathTypePrefix, service("1web", networkingv1.ServiceBackendPort{})),
				httpPath("/e", networkingv1.PathTypePrefix, service("web", networkingv1.ServiceBackendPort{Name: "http_port"})),
				httpPath("/f", networkingv1.PathTypePrefix, service("web", networkingv1.ServiceBackendPort{Number: 70000})),
				httpPath("/g", networkingv1.PathTypePrefix, networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("Bad Group")}}),
			}
		}), want: []string{"spec.rules[0].http.paths[0].backend", "spec.rules[0].http.paths[1].backend",
			"spec.rules[0].http.paths[2].backend.service.name", "spec.rules[0].http.paths[2].backend",
			"spec.rules[0].http.paths[3].backend.service.name", "spec.rules[0].http.paths[3].backend",
			"spec.rules[0].http.paths[4].backend.service.port.name", "spec.rules[0].http.paths[5].backend.service.port.number",
			"spec.rules[0].http.paths[6].backend.resource.apiGroup", "spec.rules[0].http.paths[6].backend.resource.kind",
			"spec.rules[0].http.paths[6].backend.resource.name"}},
		{name: "TLS secret and ingress class names", obj: mci(func(s *networkingv1.IngressSpec) {
			s.TLS[0].SecretName = "Shop TLS"
			s.IngressClassName = ptr.To("Nginx!")
		}), want: []string{"spec.tls[0].secretName", "spec.ingressClassName"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			admissiontest.Check(t, h, admissiontest.Create(tc.obj), admissiontest.Want{Denied: tc.want})
		})
	}
}
