package promote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTemplate(t *testing.T) {
	for _, tc := range []struct {
		name, member, want string
	}{{
		name: "deployment",
		member: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 4b5c
  resourceVersion: "812"
  generation: 3
  creationTimestamp: "2026-12-01T10:00:00Z"
  labels: {app: web}
  annotations:
    deployment.kubernetes.io/revision: "2"
    kubectl.kubernetes.io/last-applied-configuration: "{}"
  managedFields: [{manager: kubectl}]
spec:
  replicas: 3
status:
  readyReplicas: 3
`,
		want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations:
    deployment.kubernetes.io/revision: "2"
    work.karmada.io/conflict-resolution: overwrite
spec:
  replicas: 3
`,
	}, {
		name: "service keeps its ports, not its addresses",
		member: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.0.0.7
  clusterIPs: [10.0.0.7]
  ports: [{port: 80}]
`,
		want: `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  annotations: {work.karmada.io/conflict-resolution: overwrite}
spec:
  ports: [{port: 80}]
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Template(fromYAML(t, tc.member))
			if diff := cmp.Diff(fromYAML(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	obj := fromYAML(t, "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}}")
	res := Plan(obj, Options{Cluster: "member1", GVK: deploy, Namespace: "shop", Name: "web"})
	pp, ok := res.Policy.(*policyv1alpha1.PropagationPolicy)
	if !ok {
		t.Fatalf("policy %T, want a PropagationPolicy", res.Policy)
	}
	if pp.Namespace != "shop" || !strings.HasPrefix(pp.Name, "web-") {
		t.Errorf("policy %s/%s", pp.Namespace, pp.Name)
	}
	want := policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}
	if diff := cmp.Diff(want, pp.Spec); diff != "" {
		t.Errorf("policy spec (-want +got):\n%s", diff)
	}
	ns := fromYAML(t, "{apiVersion: v1, kind: Namespace, metadata: {name: shop}}")
	if _, ok := Plan(ns, Options{Cluster: "member1", GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Name: "shop"}).Policy.(*policyv1alpha1.ClusterPropagationPolicy); !ok {
		t.Error("a cluster-scoped object gets no ClusterPropagationPolicy")
	}
	if Plan(obj, Options{Cluster: "member1", GVK: deploy, Namespace: "shop", Name: "web", NoPolicy: true}).Policy != nil {
		t.Error("NoPolicy made a policy")
	}
}

func TestPolicyName(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	a, b := PolicyName("shop", "web", deploy), PolicyName("shop", "web", schema.GroupVersionKind{Version: "v1", Kind: "Service"})
	if a == b || a != PolicyName("shop", "web", deploy) || a == PolicyName("bar", "web", deploy) {
		t.Errorf("names not stable and distinct: %s %s", a, b)
	}
	if long := PolicyName("shop", strings.Repeat("x", 80), deploy); len(long) > 63 {
		t.Errorf("%q is longer than 63", long)
	}
}
