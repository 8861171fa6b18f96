package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// apiServer is a real API server for one test, and a kubeconfig file for it.
type apiServer struct {
	client     client.Client
	kubeconfig string
}

func startAPIServer(t *testing.T) apiServer {
	t.Helper()
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
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return apiServer{client: c, kubeconfig: kubeconfig}
}

// TestDryRunCreate: the API server accepts every object of config/default
// as written (schema, defaults, admission), without storing any. The
// namespace is created for real once its own dry run passed, because
// admission refuses objects in a namespace that does not exist.
func TestDryRunCreate(t *testing.T) {
	s := startAPIServer(t)
	ctx := t.Context()
	objs, err := Render(defaultDir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range sorted(objs) {
		if u.GetNamespace() != "" {
			continue
		}
		if err := s.client.Create(ctx, u.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("dry-run create of %s: %v", ref(u), err)
		}
	}
	if err := s.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range sorted(objs) {
		if u.GetNamespace() == "" {
			continue
		}
		if err := s.client.Create(ctx, u.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("dry-run create of %s: %v", ref(u), err)
		}
	}
	// A dry run stores nothing.
	d := &appsv1.Deployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "flotilla-operator"}, d); !apierrors.IsNotFound(err) {
		t.Errorf("getting the Deployment after a dry run: %v, want not found", err)
	}
}

// TestDeployAndDelete runs the command as `make deploy IMG=...` and `make
// undeploy` do: everything is applied and printed, applying again changes
// nothing, and --delete removes it all, the Karmada instances with the CRD.
func TestDeployAndDelete(t *testing.T) {
	s := startAPIServer(t)
	ctx := t.Context()
	const image = "registry.example/flotilla/operator:dev"
	opts := options{kubeconfig: s.kubeconfig, dir: defaultDir, image: image, timeout: 30 * time.Second}

	var out bytes.Buffer
	if err := run(ctx, opts, &out); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out.String())
	}
	want := []string{
		"namespace/flotilla-system serverside-applied",
		"customresourcedefinition.apiextensions.k8s.io/karmadas.operator.karmada.io serverside-applied",
		"serviceaccount/flotilla-operator serverside-applied",
		"clusterrole.rbac.authorization.k8s.io/flotilla-operator-flotilla-system serverside-applied",
		"role.rbac.authorization.k8s.io/flotilla-operator-leader-election serverside-applied",
		"clusterrolebinding.rbac.authorization.k8s.io/flotilla-operator-flotilla-system serverside-applied",
		"rolebinding.rbac.authorization.k8s.io/flotilla-operator-leader-election serverside-applied",
		"service/flotilla-operator-metrics serverside-applied",
		"deployment.apps/flotilla-operator serverside-applied",
	}
	if diff := cmp.Diff(want, lines(out.String())); diff != "" {
		t.Errorf("deploy output (-want +got):\n%s", diff)
	}

	objs, err := Render(defaultDir, image)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Errorf("%s after deploy: %v", ref(u), err)
		}
	}
	d := &appsv1.Deployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "flotilla-operator"}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("deployed image %q, want %q", got, image)
	}
	generation := d.Generation

	// Applying again is a no-op for the API server.
	out.Reset()
	if err := run(ctx, opts, &out); err != nil {
		t.Fatalf("deploy again: %v\n%s", err, out.String())
	}
	if err := s.client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	if d.Generation != generation {
		t.Errorf("deploying the same again moved the Deployment's generation from %d to %d", generation, d.Generation)
	}

	// An instance, which deleting the CRD deletes.
	sample := readSample(t)
	sample.SetNamespace(namespace)
	if err := s.client.Create(ctx, sample); err != nil {
		t.Fatalf("creating the sample Karmada: %v", err)
	}

	out.Reset()
	opts.delete = true
	if err := run(ctx, opts, &out); err != nil {
		t.Fatalf("undeploy: %v\n%s", err, out.String())
	}
	wantDeleted := []string{
		"customresourcedefinition.apiextensions.k8s.io/karmadas.operator.karmada.io deleted",
		"deployment.apps/flotilla-operator deleted",
		"service/flotilla-operator-metrics deleted",
		"rolebinding.rbac.authorization.k8s.io/flotilla-operator-leader-election deleted",
		"clusterrolebinding.rbac.authorization.k8s.io/flotilla-operator-flotilla-system deleted",
		"role.rbac.authorization.k8s.io/flotilla-operator-leader-election deleted",
		"clusterrole.rbac.authorization.k8s.io/flotilla-operator-flotilla-system deleted",
		"serviceaccount/flotilla-operator deleted",
		"namespace/flotilla-system deleted",
	}
	if diff := cmp.Diff(wantDeleted, lines(out.String())); diff != "" {
		t.Errorf("undeploy output (-want +got):\n%s", diff)
	}
	for _, u := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		err := s.client.Get(ctx, client.ObjectKeyFromObject(u), got)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Errorf("%s after undeploy: %v", ref(u), err)
		// envtest runs no namespace controller, which would empty and
		// remove the terminating namespace.
		case u.GetKind() == "Namespace" && got.GetDeletionTimestamp() != nil:
		default:
			t.Errorf("%s is still there after undeploy", ref(u))
		}
	}

	// Undeploying again finds nothing to delete, and is no error.
	out.Reset()
	if err := run(ctx, opts, &out); err != nil {
		t.Fatalf("undeploy again: %v\n%s", err, out.String())
	}
	for _, l := range lines(out.String()) {
		if !strings.HasSuffix(l, " not found") && l != "namespace/flotilla-system is being deleted" {
			t.Errorf("undeploy again: %q, want nothing deleted", l)
		}
	}
}

// TestDeleteWaitsForInstances: a Karmada the operator has not finalized
// keeps the CRD; undeploy says so instead of removing the operator that
// would finalize it.
func TestDeleteWaitsForInstances(t *testing.T) {
	s := startAPIServer(t)
	ctx := t.Context()
	// The default timeout to deploy (a loaded machine may take seconds to
	// establish the CRD); a short one for the undeploy that must give up.
	opts := options{kubeconfig: s.kubeconfig, dir: defaultDir}
	var out bytes.Buffer
	if err := run(ctx, opts, &out); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out.String())
	}
	opts.timeout = 2 * time.Second
	sample := readSample(t)
	sample.SetNamespace(namespace)
	sample.SetFinalizers([]string{"example.com/held"})
	if err := s.client.Create(ctx, sample); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let the CRD go, so that the API server stops cleanly.
		sample.SetFinalizers(nil)
		_ = s.client.Update(context.Background(), sample)
	})

	out.Reset()
	opts.delete = true
	err := run(ctx, opts, &out)
	if err == nil || !strings.Contains(err.Error(), "is the operator running?") {
		t.Fatalf("undeploy with a Karmada held by a finalizer: %v, want an error asking whether the operator runs", err)
	}
	d := &appsv1.Deployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "flotilla-operator"}, d); err != nil {
		t.Errorf("the operator's Deployment after the CRD deletion timed out: %v, want it kept", err)
	}
}

func readSample(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(samplesDir, "operator_v1alpha1_karmada.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func lines(s string) []string {
	return strings.Split(strings.TrimSpace(s), "\n")
}
