package helmrelease

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	cfg *rest.Config
	k8s client.Client
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run these tests with `make test`")
		return 1
	}
	env := &envtest.Environment{}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// testChart renders one ConfigMap holding .Values.greeting.
func testChart(version string) *chart.Chart {
	tmpl := []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
`)
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "greeter", Version: version},
		Templates: []*chart.File{{Name: "templates/configmap.yaml", Data: tmpl}},
		Raw:       []*chart.File{{Name: "templates/configmap.yaml", Data: tmpl}, {Name: "Chart.yaml", Data: []byte("version: " + version)}},
		Values:    map[string]any{"greeting": "hello"},
	}
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "helm-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatalf("ConfigMap %s: %v", name, err)
	}
	return cm
}

func TestApplyLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	c := New(cfg, logr.Discard())
	owner := &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: "1234", Controller: ptr.To(true)}
	r := Release{Name: "greeter", Namespace: ns, Chart: testChart("0.1.0"), Values: map[string]any{"greeting": "hi"},
		Labels: map[string]string{"example.com/instance": "x"}, Owner: owner}

	steps := []struct {
		name     string
		change   func()
		want     Outcome
		revision int
		greeting string
	}{
		{"first apply installs", func() {}, Installed, 1, "hi"},
		{"same chart and values change nothing", func() {}, Unchanged, 1, "hi"},
		{"new values upgrade", func() { r.Values = map[string]any{"greeting": "hey"} }, Upgraded, 2, "hey"},
		{"new chart upgrades", func() { r.Chart = testChart("0.2.0") }, Upgraded, 3, "hey"},
		{"force upgrades without a change", func() { r.Force = true }, Upgraded, 4, "hey"},
	}
	for _, s := range steps {
		s.change()
		rel, outcome, err := c.Apply(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		r.Force = false
		if outcome != s.want || rel.Version != s.revision {
			t.Errorf("%s: outcome %s revision %d, want %s revision %d", s.name, outcome, rel.Version, s.want, s.revision)
		}
		cm := configMap(t, ns, "greeter")
		if cm.Data["greeting"] != s.greeting {
			t.Errorf("%s: greeting %q, want %q", s.name, cm.Data["greeting"], s.greeting)
		}
		if cm.Labels["example.com/instance"] != "x" || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != "1234" {
			t.Errorf("%s: the post-renderer's label and owner are missing: %v %v", s.name, cm.Labels, cm.OwnerReferences)
		}
	}

	// Someone deletes the object; a forced upgrade puts it back.
	if err := k8s.Delete(ctx, configMap(t, ns, "greeter")); err != nil {
		t.Fatal(err)
	}
	r.Force = true
	if _, _, err := c.Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	configMap(t, ns, "greeter")

	if err := c.Uninstall(ctx, ns, "greeter"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeter"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("uninstall left the ConfigMap (get: %v)", err)
	}
	if rel, err := c.Get(ns, "greeter"); err != nil || rel != nil {
		t.Errorf("uninstall left the release: %v, %v", rel, err)
	}
	if err := c.Uninstall(ctx, ns, "greeter"); err != nil {
		t.Errorf("uninstalling twice: %v", err)
	}
}

// TestInterruptedOperation: a release left pending by an operator that died
// mid-upgrade is taken over instead of blocking every later upgrade.
func TestInterruptedOperation(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	c := New(cfg, logr.Discard())
	r := Release{Name: "stuck", Namespace: ns, Chart: testChart("0.1.0"), Values: map[string]any{"greeting": "one"}}
	if _, _, err := c.Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Revision 2 is the upgrade the operator did not live to finish.
	r.Values = map[string]any{"greeting": "one and a half"}
	if _, _, err := c.Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	acfg, err := c.actionConfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	last, err := acfg.Releases.Last("stuck")
	if err != nil {
		t.Fatal(err)
	}
	last.SetStatus(release.StatusPendingUpgrade, "operator died")
	if err := acfg.Releases.Update(last); err != nil {
		t.Fatal(err)
	}
	r.Values = map[string]any{"greeting": "two"}
	if _, outcome, err := c.Apply(ctx, r); err != nil || outcome == Unchanged {
		t.Fatalf("apply over a pending release: %s, %v", outcome, err)
	}
	if rel, err := c.Get(ns, "stuck"); err != nil || rel.Info.Status != release.StatusDeployed {
		t.Fatalf("last revision after taking over: %v, %v", rel, err)
	}
	if got := configMap(t, ns, "stuck").Data["greeting"]; got != "two" {
		t.Errorf("greeting %q after taking over", got)
	}
}

func TestDigest(t *testing.T) {
	a, err := Digest(testChart("0.1.0"), map[string]any{"x": 1, "y": map[string]any{"b": 2, "a": 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Digest(testChart("0.1.0"), map[string]any{"y": map[string]any{"a": 1, "b": 2}, "x": 1})
	if a != b {
		t.Error("the digest depends on map order")
	}
	for name, other := range map[string]func() (string, error){
		"values": func() (string, error) { return Digest(testChart("0.1.0"), map[string]any{"x": 2}) },
		"chart": func() (string, error) {
			return Digest(testChart("0.1.1"), map[string]any{"x": 1, "y": map[string]any{"b": 2, "a": 1}})
		},
	} {
		if d, _ := other(); d == a {
			t.Errorf("the digest ignores a change of %s", name)
		}
	}
}
