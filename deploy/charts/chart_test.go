// Tests of the flotilla-operator chart: it lints strictly, renders, and
// installs what config/default installs, so that `helm install` and
// `kubectl apply -k config/default` give the same operator.
package charts

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/release"
)

const (
	chartDir = "flotilla-operator"
	// The release and namespace that give the chart's objects the names of
	// config/default's.
	releaseName = "flotilla-operator"
	namespace   = "flotilla-system"
)

var (
	repoRoot      = filepath.Join("..", "..")
	kubeVersion   = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	chartCRD      = filepath.Join(chartDir, "crds", "operator.karmada.io_karmadas.yaml")
	chartRole     = filepath.Join(chartDir, "files", "operator-role.yaml")
	generatedCRD  = filepath.Join(repoRoot, "config", "crd", "operator", "operator.karmada.io_karmadas.yaml")
	generatedRole = filepath.Join(repoRoot, "config", "rbac", "operator", "role.yaml")
)

// valueCases are representative values; each must lint and render.
var valueCases = []struct {
	name   string
	values map[string]any
}{
	{name: "defaults"},
	{name: "one namespace, lease elsewhere, flags", values: map[string]any{
		"watchNamespace":         "team-a",
		"leaderElection":         map[string]any{"namespace": "kube-system"},
		"concurrentKarmadaSyncs": 8,
		"extraArgs":              []any{"-v=2"},
		"image":                  map[string]any{"repository": "mirror.example/flotilla/operator", "tag": "v0.1.1"},
		"imagePullSecrets":       []any{"regcred"},
		"labels":                 map[string]any{"team": "platform"},
		"podAnnotations":         map[string]any{"example.com/scrape": "true"},
		"nodeSelector":           map[string]any{"node-role.kubernetes.io/control-plane": ""},
		"tolerations":            []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"priorityClassName":      "system-cluster-critical",
	}},
	{name: "own ServiceAccount, no RBAC, no Service, no leader election", values: map[string]any{
		"serviceAccount": map[string]any{"create": false, "name": "operator-sa"},
		"rbac":           map[string]any{"create": false},
		"metrics":        map[string]any{"service": map[string]any{"enabled": false}},
		"leaderElection": map[string]any{"enabled": false},
	}},
}

// TestLint is `helm lint --strict` with each case's values.
func TestLint(t *testing.T) {
	for _, c := range valueCases {
		t.Run(c.name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = namespace
			lint.KubeVersion = kubeVersion
			result := lint.Run([]string{chartDir}, c.values)
			for _, msg := range result.Messages {
				t.Logf("%s", msg)
			}
			if result.TotalChartsLinted != 1 || len(result.Errors) > 0 {
				t.Errorf("lint: %d charts linted, errors %v", result.TotalChartsLinted, result.Errors)
			}
		})
	}
}

// TestMetadata: the chart is this release's, and installs its image.
func TestMetadata(t *testing.T) {
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.AppVersion != release.Version {
		t.Errorf("appVersion %q, want this release's %q (internal/release.Version)", c.Metadata.AppVersion, release.Version)
	}
	if !slices.ContainsFunc(c.Files, func(f *chart.File) bool { return f.Name == "README.md" }) {
		t.Error("no README.md")
	}
	if len(c.CRDObjects()) != 1 {
		t.Errorf("%d CRDs in crds/, want the Karmada CRD", len(c.CRDObjects()))
	}
}

// TestCopiesUpToDate: the chart carries copies of generated files, which
// `make manifests` refreshes.
func TestCopiesUpToDate(t *testing.T) {
	for chartFile, generated := range map[string]string{chartCRD: generatedCRD, chartRole: generatedRole} {
		want, err := os.ReadFile(generated)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(chartFile)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s differs from %s: run make manifests", chartFile, generated)
		}
	}
}

// TestSameAsKustomize: with its defaults, the chart installs what
// config/default does, but the namespace (helm install --create-namespace
// makes it): the same objects by kind and name, the same CRD, RBAC rules
// and bindings, and the same container, pod and metrics Service.
func TestSameAsKustomize(t *testing.T) {
	fromHelm := decode(t, renderChart(t, nil))
	fromKustomize := decode(t, renderKustomize(t))

	kustomizeIDs := fromKustomize.ids()
	kustomizeIDs = slices.DeleteFunc(kustomizeIDs, func(id string) bool { return id == "Namespace//"+namespace })
	if diff := cmp.Diff(kustomizeIDs, fromHelm.ids()); diff != "" {
		t.Errorf("objects (-config/default +chart):\n%s", diff)
	}

	if diff := cmp.Diff(fromKustomize.crd.Spec, fromHelm.crd.Spec); diff != "" {
		t.Errorf("CRD spec (-config/default +chart):\n%s", diff)
	}
	if diff := cmp.Diff(fromKustomize.clusterRole.Rules, fromHelm.clusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-config/default +chart):\n%s", diff)
	}
	if diff := cmp.Diff(fromKustomize.role.Rules, fromHelm.role.Rules); diff != "" {
		t.Errorf("leader election Role rules (-config/default +chart):\n%s", diff)
	}
	for _, pair := range []struct {
		name       string
		kust, helm any
	}{
		{"ClusterRoleBinding roleRef", fromKustomize.clusterRoleBinding.RoleRef, fromHelm.clusterRoleBinding.RoleRef},
		{"ClusterRoleBinding subjects", fromKustomize.clusterRoleBinding.Subjects, fromHelm.clusterRoleBinding.Subjects},
		{"RoleBinding roleRef", fromKustomize.roleBinding.RoleRef, fromHelm.roleBinding.RoleRef},
		{"RoleBinding subjects", fromKustomize.roleBinding.Subjects, fromHelm.roleBinding.Subjects},
		{"metrics Service ports", fromKustomize.service.Spec.Ports, fromHelm.service.Spec.Ports},
	} {
		if diff := cmp.Diff(pair.kust, pair.helm); diff != "" {
			t.Errorf("%s (-config/default +chart):\n%s", pair.name, diff)
		}
	}

	kd, hd := fromKustomize.deployment, fromHelm.deployment
	if diff := cmp.Diff(kd.Spec.Replicas, hd.Spec.Replicas); diff != "" {
		t.Errorf("replicas (-config/default +chart):\n%s", diff)
	}
	// The pod without the labels, which differ in the release's own
	// (app.kubernetes.io/instance, managed-by Helm).
	kpod, hpod := kd.Spec.Template.DeepCopy(), hd.Spec.Template.DeepCopy()
	kpod.Labels, hpod.Labels = nil, nil
	// IfNotPresent is what the API server defaults a tagged image to.
	kpod.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	if diff := cmp.Diff(kpod, hpod); diff != "" {
		t.Errorf("pod template (-config/default +chart):\n%s", diff)
	}
	for name, d := range map[string]*appsv1.Deployment{"chart": hd, "config/default": kd} {
		if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s: Deployment selector does not select its pods", name)
		}
	}
	if !labels.SelectorFromSet(fromHelm.service.Spec.Selector).Matches(labels.Set(hd.Spec.Template.Labels)) {
		t.Error("chart: metrics Service does not select the operator's pods")
	}
}

// TestValues: what the values turn into.
func TestValues(t *testing.T) {
	o := decode(t, renderChart(t, valueCases[1].values))
	c := o.deployment.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--leader-elect",
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:8081",
		"--leader-elect-resource-namespace=kube-system",
		"--watch-namespace=team-a",
		"--concurrent-karmada-syncs=8",
		"-v=2",
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if c.Image != "mirror.example/flotilla/operator:v0.1.1" {
		t.Errorf("image %q", c.Image)
	}
	if o.role.Namespace != "kube-system" || o.roleBinding.Namespace != "kube-system" {
		t.Errorf("leader election Role in %q and RoleBinding in %q, want the Lease's namespace kube-system", o.role.Namespace, o.roleBinding.Namespace)
	}
	if s := o.roleBinding.Subjects; len(s) != 1 || s[0].Namespace != namespace {
		t.Errorf("leader election RoleBinding subjects %+v, want the ServiceAccount of %s", s, namespace)
	}
	if o.deployment.Labels["team"] != "platform" || o.deployment.Spec.Template.Labels["team"] != "platform" {
		t.Error("labels do not reach the Deployment and its pods")
	}

	o = decode(t, renderChart(t, valueCases[2].values))
	want := []string{"CustomResourceDefinition//karmadas.operator.karmada.io", "Deployment/" + namespace + "/flotilla-operator"}
	if diff := cmp.Diff(want, o.ids()); diff != "" {
		t.Errorf("objects without ServiceAccount, RBAC and Service (-want +got):\n%s", diff)
	}
	if got := o.deployment.Spec.Template.Spec.ServiceAccountName; got != "operator-sa" {
		t.Errorf("serviceAccountName %q, want operator-sa", got)
	}
	if slices.Contains(o.deployment.Spec.Template.Spec.Containers[0].Args, "--leader-elect") {
		t.Error("--leader-elect with leaderElection.enabled false")
	}

	for _, bad := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"serviceAccount": map[string]any{"create": false}}, "serviceAccount.name"},
		{map[string]any{"concurrentKarmadaSyncs": 0}, "concurrentKarmadaSyncs: at least 1"},
	} {
		if _, err := render(bad.values); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("values %v: error %v, want one naming %q", bad.values, err, bad.want)
		}
	}
}

// TestTwoNamespaces: releases of one name in two namespaces (as
// flotillactl init makes them) share no cluster-scoped object but the CRD,
// which Helm installs only when it is missing, and each binds its own
// ServiceAccount.
func TestTwoNamespaces(t *testing.T) {
	owners := map[string]string{}
	for _, ns := range []string{namespace, "team-b"} {
		manifest, err := renderIn(ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := decode(t, manifest)
		for _, u := range o.all {
			if u.GetNamespace() != "" || u.GetKind() == "CustomResourceDefinition" {
				continue
			}
			id := u.GetKind() + "/" + u.GetName()
			if other, ok := owners[id]; ok {
				t.Errorf("%s is rendered for both %s and %s", id, other, ns)
			}
			owners[id] = ns
		}
		want := "flotilla-operator-" + ns
		if o.clusterRole.Name != want || o.clusterRoleBinding.Name != want || o.clusterRoleBinding.RoleRef.Name != want {
			t.Errorf("%s: ClusterRole %s, ClusterRoleBinding %s of %s; want %s", ns, o.clusterRole.Name,
				o.clusterRoleBinding.Name, o.clusterRoleBinding.RoleRef.Name, want)
		}
		if s := o.clusterRoleBinding.Subjects; len(s) != 1 || s[0].Namespace != ns {
			t.Errorf("%s: ClusterRoleBinding subjects %+v, want the ServiceAccount of %s", ns, s, ns)
		}
	}
	if len(owners) != 4 {
		t.Errorf("cluster-scoped objects %v, want a ClusterRole and a ClusterRoleBinding per namespace", owners)
	}
}

// renderChart is `helm template --include-crds` as release flotilla-operator
// in flotilla-system.
func renderChart(t *testing.T, values map[string]any) string {
	t.Helper()
	manifest, err := render(values)
	if err != nil {
		t.Fatal(err)
	}
	return manifest
}

func render(values map[string]any) (string, error) {
	return renderIn(namespace, values)
}

// renderIn renders release flotilla-operator into ns.
func renderIn(ns string, values map[string]any) (string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return "", err
	}
	install := action.NewInstall(&action.Configuration{
		Releases:   storage.Init(driver.NewMemory()),
		KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Log:        func(string, ...any) {},
	})
	install.DryRun = true
	install.ClientOnly = true
	install.IncludeCRDs = true
	install.ReleaseName = releaseName
	install.Namespace = ns
	install.KubeVersion = kubeVersion
	rel, err := install.Run(chrt, values)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// renderKustomize is `kustomize build config/default`.
func renderKustomize(t *testing.T) string {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// objects are the decoded objects of a manifest, one of each kind.
type objects struct {
	all                []*unstructured.Unstructured
	crd                *apiextensionsv1.CustomResourceDefinition
	serviceAccount     *corev1.ServiceAccount
	clusterRole        *rbacv1.ClusterRole
	clusterRoleBinding *rbacv1.ClusterRoleBinding
	role               *rbacv1.Role
	roleBinding        *rbacv1.RoleBinding
	service            *corev1.Service
	deployment         *appsv1.Deployment
}

// ids are "Kind/namespace/name", sorted.
func (o objects) ids() []string {
	ids := make([]string, 0, len(o.all))
	for _, u := range o.all {
		ids = append(ids, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
	}
	slices.Sort(ids)
	return ids
}

// decode splits a manifest and decodes each object strictly into its
// client-go type.
func decode(t *testing.T, manifest string) objects {
	t.Helper()
	var o objects
	for _, doc := range releaseutil.SplitManifests(manifest) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		o.all = append(o.all, u)
		var into any
		switch u.GetKind() {
		case "Namespace":
			into = &corev1.Namespace{}
		case "CustomResourceDefinition":
			o.crd = &apiextensionsv1.CustomResourceDefinition{}
			into = o.crd
		case "ServiceAccount":
			o.serviceAccount = &corev1.ServiceAccount{}
			into = o.serviceAccount
		case "ClusterRole":
			o.clusterRole = &rbacv1.ClusterRole{}
			into = o.clusterRole
		case "ClusterRoleBinding":
			o.clusterRoleBinding = &rbacv1.ClusterRoleBinding{}
			into = o.clusterRoleBinding
		case "Role":
			o.role = &rbacv1.Role{}
			into = o.role
		case "RoleBinding":
			o.roleBinding = &rbacv1.RoleBinding{}
			into = o.roleBinding
		case "Service":
			o.service = &corev1.Service{}
			into = o.service
		case "Deployment":
			o.deployment = &appsv1.Deployment{}
			into = o.deployment
		default:
			t.Fatalf("unexpected %s %s", u.GetKind(), u.GetName())
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return o
}

// TestDryRunCreate: a real API server accepts every object the chart
// renders, with its defaults and with each case's values, as `helm install`
// would create them (the CRD for real, the rest as a server-side dry run,
// since dry runs store nothing for later objects to refer to).
func TestDryRunCreate(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run with `make test`, which builds the Kubernetes binaries into bin/k8s")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, ns := range []string{namespace, "kube-system"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	crdCreated := false
	for _, vc := range valueCases {
		t.Run(vc.name, func(t *testing.T) {
			for _, u := range decode(t, renderChart(t, vc.values)).all {
				var opts []client.CreateOption
				if u.GetKind() == "CustomResourceDefinition" {
					if crdCreated {
						continue
					}
					crdCreated = true
				} else {
					opts = append(opts, client.DryRunAll)
				}
				if err := c.Create(ctx, u.DeepCopy(), opts...); err != nil {
					t.Errorf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
				}
			}
		})
	}
}
