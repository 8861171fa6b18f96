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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
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

// update changes obj in the control plane with mutate, re-reading and
// retrying on conflicts: the controllers label and annotate templates
// while a scenario changes them, as they would under a user's kubectl.
func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cp.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return cp.Update(t.Context(), obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}

// remove deletes obj from the control plane.
func remove(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cp.Delete(t.Context(), obj); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting %T %s: %v", obj, obj.GetName(), err)
	}
}

// inMembers waits until, in each named member, the object under key exists
// and satisfies ok. newObj returns an empty object of the kind to read.
func inMembers[T client.Object](t *testing.T, members []string, key client.ObjectKey, newObj func() T, what string, ok func(T) bool) {
	t.Helper()
	for _, name := range members {
		m := member(t, name)
		eventually(t, what+" in "+name, func(ctx context.Context) (bool, error) {
			got := newObj()
			if err := m.Client.Get(ctx, key, got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return ok(got), nil
		})
	}
}

// goneFrom waits until the object under key does not exist in any of the
// named members.
func goneFrom(t *testing.T, members []string, key client.ObjectKey, obj client.Object) {
	t.Helper()
	for _, name := range members {
		m := member(t, name)
		eventually(t, key.String()+" gone from "+name, func(ctx context.Context) (bool, error) {
			err := m.Client.Get(ctx, key, obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}

// absentFrom fails t if the object under key exists in one of the named
// members now.
func absentFrom(t *testing.T, members []string, key client.ObjectKey, obj client.Object) {
	t.Helper()
	for _, name := range members {
		err := member(t, name).Client.Get(t.Context(), key, obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s in %s: want not found, got err %v", key, name, err)
		}
	}
}

// staysSo checks, for a few seconds, that cond keeps holding: used after
// an ordering barrier has shown the controllers saw a change, to catch a
// late reaction to it. It never waits for something to happen.
func staysSo(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := cond(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !ok {
			t.Fatalf("%s: no longer holds", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// propagationPolicy returns a PropagationPolicy in ns selecting selectors
// and placing them on the named clusters (every member when none).
func propagationPolicy(ns, name string, clusters []string, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: selectors},
	}
	if len(clusters) > 0 {
		p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}
	}
	return p
}

// allMembers are the names of the federation's members.
func allMembers() []string { return fed.MemberNames() }
