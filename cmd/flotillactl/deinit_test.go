package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/config/crd"
)

// runDeinitCommand runs `flotillactl deinit args...` with stdin in.
func runDeinitCommand(t *testing.T, in string, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(in))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"deinit", "--kubeconfig", kubeconfigPath}, args...))
	err := cmd.Execute()
	return out.String(), err
}

// TestDeinit: deinit says what it removes, asks first (no answer, no
// removal), waits for the operator's finalizer and, with no operator to
// remove it, says what to do; once the Karmada is gone it removes the
// namespace init made. Bad flags name themselves.
func TestDeinit(t *testing.T) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	installKarmadaCRD(t, cl)
	const ns = "deinit-test"
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{labelCreatedBy: createdBy}}}); err != nil {
		t.Fatal(err)
	}
	k := &operatorv1alpha1.Karmada{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet", Finalizers: []string{operatorv1alpha1.Finalizer}}}
	if err := cl.Create(ctx, k); err != nil {
		t.Fatal(err)
	}

	if _, err := runDeinitCommand(t, "", "--timeout=-1s"); err == nil || err.Error() != "--timeout: -1s: must not be negative" {
		t.Errorf("--timeout=-1s: %v", err)
	}

	out, err := runDeinitCommand(t, "", "-n", ns, "--name", "fleet", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	want := "deinit removes:\n  - Karmada deinit-test/fleet and its control plane\n  - namespace deinit-test\n(dry run: nothing was removed)\n"
	if out != want {
		t.Errorf("--dry-run printed\n%s\nwant\n%s", out, want)
	}

	out, err = runDeinitCommand(t, "n\n", "-n", ns, "--name", "fleet")
	if err == nil || err.Error() != "cancelled: nothing was removed (pass --force to skip the question)" || !strings.Contains(out, "Remove them? [y/N]: ") {
		t.Errorf("answering n: %v\n%s", err, out)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil || !k.DeletionTimestamp.IsZero() {
		t.Fatalf("after answering n, the Karmada: %v, deletion %v", err, k.DeletionTimestamp)
	}

	// No operator runs here to take the finalizer off.
	_, err = runDeinitCommand(t, "", "-n", ns, "--name", "fleet", "--force", "--timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "the operator (Deployment deinit-test/flotilla-operator) must be running to uninstall it: see its logs, then run deinit again") {
		t.Errorf("deinit without an operator: %v", err)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil || k.DeletionTimestamp.IsZero() {
		t.Fatalf("the Karmada is not being deleted: %v", err)
	}

	// The operator's part, then deinit again finishes the job.
	k.Finalizers = nil
	if err := cl.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	out, err = runDeinitCommand(t, "", "-n", ns, "--name", "fleet", "-f")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Deleting namespace deinit-test") || !strings.Contains(out, "Flotilla is removed from the host cluster") {
		t.Errorf("output:\n%s", out)
	}
	n := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: ns}, n); err == nil && n.DeletionTimestamp.IsZero() {
		t.Error("the namespace init made is not being deleted")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}

	out, err = runDeinitCommand(t, "", "-n", "elsewhere", "--name", "fleet")
	if err != nil || out != "Nothing to remove: no Karmada elsewhere/fleet and no operator release in elsewhere\n" {
		t.Errorf("nothing installed: %v, %q", err, out)
	}
}

// installKarmadaCRD creates the operator's CRD, as the operator's chart
// does, and waits until it is served.
func installKarmadaCRD(t *testing.T, cl client.Client) {
	t.Helper()
	data, err := crd.Operator.ReadFile("operator/operator.karmada.io_karmadas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, obj); err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := cl.List(ctx, &operatorv1alpha1.KarmadaList{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the Karmada CRD is not served: %v", err)
	}
}
