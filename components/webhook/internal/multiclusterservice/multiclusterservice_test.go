package multiclusterservice

import (
	"testing"

	"gomodules.xyz/jsonpatch/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/components/webhook/internal/admissiontest"
)

func mcs(name string, mutate ...func(*networkingv1alpha1.MultiClusterService)) *networkingv1alpha1.MultiClusterService {
	m := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{
			Types:            []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			Ports:            []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}, {Port: 8443}},
			ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}},
			ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}, {Name: "member3"}},
		},
	}
	for _, f := range mutate {
		f(m)
	}
	return m
}

func withID(id string) func(*networkingv1alpha1.MultiClusterService) {
	return func(m *networkingv1alpha1.MultiClusterService) {
		m.Labels = map[string]string{"app": "web", networkingv1alpha1.MultiClusterServicePermanentIDLabel: id}
	}
}

func TestDefault(t *testing.T) {
	h := NewDefaulter(admissiontest.Decoder())
	tests := []struct {
		name     string
		obj, old *networkingv1alpha1.MultiClusterService
		want     admissiontest.Want
	}{
		{name: "has its id", obj: mcs("web", withID("id-1"))},
		{
			name: "new service gets an id",
			obj:  mcs("web"),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels"}}, IgnorePatchValues: []string{"/metadata/labels"}},
		},
		{
			name: "update that drops the id gets it back",
			obj:  mcs("web", func(m *networkingv1alpha1.MultiClusterService) { m.Labels = map[string]string{"app": "web"} }),
			old:  mcs("web", withID("id-1")),
			want: admissiontest.Want{Patch: []jsonpatch.Operation{
				{Operation: "add", Path: "/metadata/labels/multiclusterservice.karmada.io~1permanent-id", Value: "id-1"},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			admissiontest.Check(t, h, req, tc.want)
		})
	}
}

// TestDefaultPatchesOnlyMetadata: fields the request left out (spec.range,
// status) stay out.
func TestDefaultPatchesOnlyMetadata(t *testing.T) {
	req := admissiontest.Create(mcs("web"))
	req.Object.Raw = []byte(`{"apiVersion":"networking.karmada.io/v1alpha1","kind":"MultiClusterService",` +
		`"metadata":{"name":"web","namespace":"apps"},"spec":{"types":["CrossCluster"]}}`)
	admissiontest.Check(t, NewDefaulter(admissiontest.Decoder()), req, admissiontest.Want{
		Patch:             []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels"}},
		IgnorePatchValues: []string{"/metadata/labels"},
	})
}

func TestValidate(t *testing.T) {
	h := NewValidator(admissiontest.Decoder())
	tests := []struct {
		name     string
		obj, old *networkingv1alpha1.MultiClusterService
		want     []string
	}{
		{name: "valid", obj: mcs("web")},
		{name: "load balancer, every port", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec = networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}}
		})},
		{name: "name is not a Service name", obj: mcs("1web"), want: []string{"metadata.name"}},
		{name: "types", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec.Types = []networkingv1alpha1.ExposureType{"CrossCluster", "NodePort", "LoadBalancer"}
		}), want: []string{"spec.types[1]", "spec.types"}},
		{name: "no type", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) { m.Spec.Types = nil }),
			want: []string{"spec.types"}},
		{name: "ports", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec.Ports = []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}, {Name: "http", Port: 0}, {Name: "Bad_Name", Port: 70000}}
		}), want: []string{"spec.ports[1].name", "spec.ports[1].port", "spec.ports[2].name", "spec.ports[2].port"}},
		{name: "cluster names", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec.ProviderClusters = []networkingv1alpha1.ClusterSelector{{Name: "Member_1"}, {}}
			m.Spec.ConsumerClusters = []networkingv1alpha1.ClusterSelector{{Name: "a-cluster-name-that-is-much-longer-than-48-characters"}}
			m.Spec.ServiceProvisionClusters = []string{"ok", "not ok"}
			m.Spec.ServiceConsumptionClusters = []string{"-bad"}
			m.Spec.Range.ClusterNames = []string{"bad."}
		}), want: []string{"spec.providerClusters[0].name", "spec.providerClusters[1].name", "spec.consumerClusters[0].name",
			"spec.serviceProvisionClusters[1]", "spec.serviceConsumptionClusters[0]", "spec.range.clusterNames[0]"}},
		{name: "types are immutable", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
		}), old: mcs("web"), want: []string{"spec.types"}},
		{name: "update keeping types", obj: mcs("web", func(m *networkingv1alpha1.MultiClusterService) { m.Spec.Ports = nil }), old: mcs("web")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissiontest.Create(tc.obj)
			if tc.old != nil {
				req = admissiontest.Update(tc.obj, tc.old)
			}
			admissiontest.Check(t, h, req, admissiontest.Want{Denied: tc.want})
		})
	}
}
