package overrides

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Objects are built from YAML, decoded the way the API machinery decodes
// them (integers as int64), then adjusted with small setters.

func fromYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	obj := map[string]any{}
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return &unstructured.Unstructured{Object: obj}
}

type objOpt func(testing.TB, *unstructured.Unstructured)

// deployment is Deployment default/web with container app (nginx:1.25,
// command and args set), sidecar (ghcr.io/org/team/proxy:v1) and init
// container init (busybox).
func deployment(t testing.TB, opts ...objOpt) *unstructured.Unstructured {
	t.Helper()
	u := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        command: [nginx]
        args: ["-g", "daemon off;"]
      - name: sidecar
        image: ghcr.io/org/team/proxy:v1
      initContainers:
      - name: init
        image: busybox
`)
	for _, o := range opts {
		o(t, u)
	}
	return u
}

// configMap is ConfigMap default/settings holding data.
func configMap(t testing.TB, data map[string]string, opts ...objOpt) *unstructured.Unstructured {
	t.Helper()
	u := fromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n")
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	for _, o := range opts {
		o(t, u)
	}
	return u
}

// set sets the field at a dotted path; a numeric segment indexes a list.
func set(path string, value any) objOpt {
	return func(t testing.TB, u *unstructured.Unstructured) {
		t.Helper()
		setPath(t, u.Object, strings.Split(path, "."), value)
	}
}

// del removes the field at a dotted path.
func del(path string) objOpt {
	return func(t testing.TB, u *unstructured.Unstructured) {
		t.Helper()
		setPath(t, u.Object, strings.Split(path, "."), deleteMarker{})
	}
}

type deleteMarker struct{}

func setPath(t testing.TB, node any, path []string, value any) {
	t.Helper()
	p := make(pointer, len(path))
	copy(p, path)
	op := policyv1alpha1.OverriderOpAdd
	if _, ok := value.(deleteMarker); ok {
		op, value = policyv1alpha1.OverriderOpRemove, nil
	} else if _, err := p.get(node); err == nil {
		op = policyv1alpha1.OverriderOpReplace
	}
	if err := p.patch(node.(map[string]any), op, value); err != nil {
		t.Fatalf("builder: %s %v: %v", op, path, err)
	}
}

// withLabel and withAnnotation take keys with dots, which set cannot.
func withLabel(k, v string) objOpt      { return setMeta("labels", k, v) }
func withAnnotation(k, v string) objOpt { return setMeta("annotations", k, v) }

func setMeta(field, k, v string) objOpt {
	return func(t testing.TB, u *unstructured.Unstructured) {
		t.Helper()
		m, _, _ := unstructured.NestedStringMap(u.Object, "metadata", field)
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
		if err := unstructured.SetNestedStringMap(u.Object, m, "metadata", field); err != nil {
			t.Fatal(err)
		}
	}
}

func strs(s ...string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Policies.

type specOpt func(*policyv1alpha1.OverrideSpec)

func op(name string, opts ...specOpt) policyv1alpha1.OverridePolicy {
	p := policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, o := range opts {
		o(&p.Spec)
	}
	return p
}

func opIn(ns, name string, opts ...specOpt) policyv1alpha1.OverridePolicy {
	p := op(name, opts...)
	p.Namespace = ns
	return p
}

func cop(name string, opts ...specOpt) policyv1alpha1.ClusterOverridePolicy {
	p := policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(&p.Spec)
	}
	return p
}

func selecting(rs ...policyv1alpha1.ResourceSelector) specOpt {
	return func(s *policyv1alpha1.OverrideSpec) { s.ResourceSelectors = append(s.ResourceSelectors, rs...) }
}

// withRule adds an overrideRule; target nil means every cluster.
func withRule(target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) specOpt {
	return func(s *policyv1alpha1.OverrideSpec) {
		s.OverrideRules = append(s.OverrideRules, policyv1alpha1.RuleWithCluster{TargetCluster: target, Overriders: o})
	}
}

// deprecatedForm sets the top-level targetCluster and overriders.
func deprecatedForm(target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) specOpt {
	return func(s *policyv1alpha1.OverrideSpec) { s.TargetCluster, s.Overriders = target, o }
}

func deployments() policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
}

func deploymentNamed(name string) policyv1alpha1.ResourceSelector {
	rs := deployments()
	rs.Name = name
	return rs
}

func deploymentsLabelled(kv ...string) policyv1alpha1.ResourceSelector {
	rs := deployments()
	rs.LabelSelector = &metav1.LabelSelector{MatchLabels: pairs(kv...)}
	return rs
}

func pairs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func plaintext(operator policyv1alpha1.OverriderOperator, path, value string) policyv1alpha1.PlaintextOverrider {
	o := policyv1alpha1.PlaintextOverrider{Path: path, Operator: operator}
	if value != "" {
		o.Value = apiextensionsv1.JSON{Raw: []byte(value)}
	}
	return o
}

func plain(ops ...policyv1alpha1.PlaintextOverrider) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{Plaintext: ops}
}

func jsonValue(s string) apiextensionsv1.JSON {
	if s == "" {
		return apiextensionsv1.JSON{}
	}
	return apiextensionsv1.JSON{Raw: []byte(s)}
}

func names(n ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: n}
}

// Clusters.

type clusterOpt func(*clusterv1alpha1.Cluster)

func cluster(name string, opts ...clusterOpt) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func clusterLabels(kv ...string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Labels = pairs(kv...) }
}

func located(provider, region string, zones ...string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Spec.Provider, c.Spec.Region, c.Spec.Zones = provider, region, zones
	}
}

func fieldIs(key string, operator corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: operator, Values: values}
}

// withoutRecord drops the applied-overrides annotations (and an emptied
// annotations map), for tests about the overriders themselves.
func withoutRecord(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	u = u.DeepCopy()
	a := u.GetAnnotations()
	if a == nil {
		return u
	}
	delete(a, policyv1alpha1.AppliedOverrides)
	delete(a, policyv1alpha1.AppliedClusterOverrides)
	if len(a) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	} else {
		u.SetAnnotations(a)
	}
	return u
}

// refs renders matches as "Kind/ns/name[rule]" for compact comparisons.
func refs(ms []Match) []string {
	if len(ms) == 0 {
		return nil // as cmp.Diff sees it, none applied is nil, not empty
	}
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Policy.String()+"["+itoa(m.Rule)+"]")
	}
	return out
}

func itoa(i int) string {
	if i == DeprecatedRule {
		return "deprecated"
	}
	return strconv.Itoa(i)
}
