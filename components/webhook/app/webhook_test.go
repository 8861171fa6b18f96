package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// The integration tests share one API server with the webhook registered
// as envtest registers webhooks (config/webhook/manifests.yaml rewritten to
// a URL on 127.0.0.1), the bindings' conversion pointed at the same server,
// and the webhook running in-process.
var (
	cp  client.Client
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		dir := filepath.Join(root, "bin", "k8s", "v1.37.2")
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
			fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set and bin/k8s/v1.37.2 has no kube-apiserver: run `make k8s-binaries`")
			return 1
		}
		_ = os.Setenv("KUBEBUILDER_ASSETS", dir)
	}
	scheme, err := Scheme()
	if err == nil {
		err = apiextensionsv1.AddToScheme(scheme)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths:            []string{filepath.Join(root, "config", "webhook", "manifests.yaml")},
			LocalServingHost: "127.0.0.1",
		},
	}
	cfg, err = env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the API server:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if cp, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	wo := &env.WebhookInstallOptions
	opts, err := ParseOptions("--bind-address="+wo.LocalServingHost, fmt.Sprintf("--secure-port=%d", wo.LocalServingPort),
		"--cert-dir="+wo.LocalServingCertDir, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--enable-federated-quota-enforcement")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, opts, funcr.New(func(p, a string) { fmt.Fprintln(os.Stderr, p, a) }, funcr.Options{}))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "webhook:", err)
		}
	}()
	baseURL := fmt.Sprintf("https://%s:%d", wo.LocalServingHost, wo.LocalServingPort)
	if err := RegisterConversion(ctx, cp, baseURL, wo.LocalServingCAData); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := waitServing(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// waitServing returns once the API server calls the webhook: a policy that
// only the webhook refuses is refused.
func waitServing(ctx context.Context) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p := policy("probe", func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Preemption = policyv1alpha1.PreemptAlways })
		last = cp.Create(ctx, p, client.DryRunAll)
		return apierrors.IsInvalid(last), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the webhook to refuse an invalid policy (last answer: %w): %w", last, err)
	}
	return nil
}

func policy(name string, mutate ...func(*policyv1alpha1.PropagationPolicy)) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// invalidFields returns the fields an Invalid error names, failing the
// test if err is anything else.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error %v, want Invalid", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error %v has no details", err)
	}
	fields := make([]string, 0, len(status.Status().Details.Causes))
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	slices.Sort(fields)
	return fields
}

func TestInvalidPoliciesRefused(t *testing.T) {
	ctx := t.Context()
	err := cp.Create(ctx, policy("greedy", func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Preemption = policyv1alpha1.PreemptAlways
		p.Spec.Placement.ClusterAffinity.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
	}))
	want := []string{"spec.placement.clusterAffinity.labelSelector.matchLabels", "spec.resourceSelectors[0].name"}
	if got := invalidFields(t, err); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if !strings.Contains(err.Error(), `admission webhook "propagationpolicy.karmada.io" denied the request`) {
		t.Errorf("error %q does not come from the webhook", err)
	}

	cop := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "labels"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"a": "not a label value!"}}},
		}}}},
	}
	if got := invalidFields(t, cp.Create(ctx, cop)); !slices.Equal(got, []string{"spec.overrideRules[0].overriders.labelsOverrider[0].value"}) {
		t.Errorf("ClusterOverridePolicy fields %v", got)
	}

	ric := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
			Customizations: configv1alpha1.CustomizationRules{
				ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(obj) return obj.spec.replicas"},
			},
		},
	}
	if got := invalidFields(t, cp.Create(ctx, ric)); !slices.Equal(got, []string{"spec.customizations.replicaResource.luaScript"}) {
		t.Errorf("ResourceInterpreterCustomization fields %v", got)
	}
}

func TestPolicyDefaults(t *testing.T) {
	ctx := t.Context()
	p := policy("defaults", func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{MaxGroups: 1}}
		p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}
	})
	if err := cp.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), p) })
	got := &policyv1alpha1.PropagationPolicy{}
	if err := cp.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	id := got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	if id == "" {
		t.Error("no permanent id")
	}
	if ns := got.Spec.ResourceSelectors[0].Namespace; ns != "default" {
		t.Errorf("selector namespace %q", ns)
	}
	var tolerated []string
	for _, tol := range got.Spec.Placement.ClusterTolerations {
		if tol.Effect == corev1.TaintEffectNoExecute && tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 {
			tolerated = append(tolerated, tol.Key)
		}
	}
	if !slices.Equal(tolerated, []string{"cluster.karmada.io/not-ready", "cluster.karmada.io/unreachable"}) {
		t.Errorf("tolerations %+v", got.Spec.Placement.ClusterTolerations)
	}
	if c := got.Spec.Placement.SpreadConstraints[0]; c.SpreadByField != "cluster" || c.MinGroups != 1 {
		t.Errorf("spread constraint %+v", c)
	}
	if rs := got.Spec.Placement.ReplicaScheduling; rs.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceWeighted {
		t.Errorf("replica scheduling %+v", rs)
	}

	// The id survives an update that drops the labels, and cannot change.
	got.Labels = nil
	if err := cp.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != id {
		t.Errorf("id after update %q, want %q", got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], id)
	}
	got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "another"
	if fields := invalidFields(t, cp.Update(ctx, got)); !slices.Equal(fields, []string{"metadata.labels[propagationpolicy.karmada.io/permanent-id]"}) {
		t.Errorf("changing the id: fields %v", fields)
	}
}

func TestDeletionProtection(t *testing.T) {
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "precious", Namespace: "default",
		Labels: map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Always"}}}
	if err := cp.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := cp.Delete(ctx, cm); !apierrors.IsForbidden(err) {
		t.Fatalf("deleting a protected ConfigMap: %v, want Forbidden", err)
	}
	if err := cp.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"),
		client.MatchingLabels{"resourcetemplate.karmada.io/deletion-protected": "Always"}); err == nil {
		t.Error("deleting the collection succeeded")
	}
	if err := cp.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatalf("the protected ConfigMap is gone: %v", err)
	}
	cm.Labels = nil
	if err := cp.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := cp.Delete(ctx, cm); err != nil {
		t.Fatalf("deleting once unprotected: %v", err)
	}
}

func TestBindingConversion(t *testing.T) {
	ctx := t.Context()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "uid-1"},
			Replicas:            3,
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
			Clusters:            []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}},
			SchedulerName:       "default-scheduler",
		},
	}
	if err := cp.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), rb) })
	if rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" {
		t.Error("binding got no permanent id")
	}

	// Read back as v1alpha1: replicas and per-replica resources move into
	// spec.resource.
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("work.karmada.io/v1alpha1")
	old.SetKind("ResourceBinding")
	if err := cp.Get(ctx, client.ObjectKeyFromObject(rb), old); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(old.Object, "spec", "resource", "replicas"); r != 3 {
		t.Errorf("v1alpha1 spec.resource.replicas = %d", r)
	}
	if cpu, _, _ := unstructured.NestedString(old.Object, "spec", "resource", "resourcePerReplicas", "cpu"); cpu != "250m" {
		t.Errorf("v1alpha1 spec.resource.resourcePerReplicas.cpu = %q", cpu)
	}

	// Written back as v1alpha1 with a change: v1alpha2 sees the change and
	// keeps what v1alpha1 cannot show.
	if err := unstructured.SetNestedField(old.Object, int64(5), "spec", "resource", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Update(ctx, old); err != nil {
		t.Fatal(err)
	}
	got := &workv1alpha2.ResourceBinding{}
	if err := cp.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 5 || got.Spec.Resource.UID != "uid-1" || got.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("v1alpha2 after a v1alpha1 update: %+v", got.Spec)
	}
	if _, ok := got.Annotations["work.flotilla.io/v1alpha2-binding"]; ok {
		t.Error("the v1alpha2 object carries the conversion annotation")
	}

	// Created as v1alpha1, read as v1alpha2.
	crb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.karmada.io/v1alpha1",
		"kind":       "ClusterResourceBinding",
		"metadata":   map[string]any{"name": "system.foo-clusterrole"},
		"spec": map[string]any{
			"resource": map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "system:foo", "replicas": int64(2)},
			"clusters": []any{map[string]any{"name": "member2", "replicas": int64(2)}},
		},
	}}
	if err := cp.Create(ctx, crb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), crb) })
	crb2 := &workv1alpha2.ClusterResourceBinding{}
	if err := cp.Get(ctx, client.ObjectKey{Name: "system.foo-clusterrole"}, crb2); err != nil {
		t.Fatal(err)
	}
	if crb2.Spec.Replicas != 2 || len(crb2.Spec.Clusters) != 1 || crb2.Spec.Clusters[0].Name != "member2" {
		t.Errorf("v1alpha2 of a v1alpha1 ClusterResourceBinding: %+v", crb2.Spec)
	}
	if crb2.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] == "" {
		t.Error("ClusterResourceBinding got no permanent id")
	}
}
