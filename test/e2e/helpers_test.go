package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

// eventually polls cond until it holds, failing t after a generous deadline:
// the suite asserts outcomes, never how fast they came.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// namespace creates a namespace of the test's own in the control plane, so
// that parallel scenarios never share objects, and removes it at the end.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cp.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), ns) })
	for _, m := range fed.Members {
		eventually(t, "namespace "+name+" in "+m.Name, func(ctx context.Context) (bool, error) {
			err := m.Client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	return name
}

// create creates obj in the control plane and fails t on error.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cp.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// member returns the member cluster called name.
func member(t *testing.T, name string) *localfed.Cluster {
	t.Helper()
	m := fed.Member(name)
	if m == nil {
		t.Fatalf("no member %s", name)
	}
	return m
}

// applyFile creates every document of a multi-document YAML file in the
// control plane, in namespace ns.
func applyFile(t *testing.T, path, ns string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		obj.SetNamespace(ns)
		create(t, obj)
	}
}
