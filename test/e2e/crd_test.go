package e2e

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

var widgetGVK = schema.GroupVersionKind{Group: "e2e.flotilla.io", Version: "v1", Kind: "Widget"}

// widgetCRD is a small namespaced CRD with a spec and a status.
func widgetCRD() *unstructured.Unstructured {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.e2e.flotilla.io"},
		"spec": map[string]any{
			"group": "e2e.flotilla.io",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"size":  map[string]any{"type": "integer"},
							"color": map[string]any{"type": "string"},
						}},
						"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					},
				}},
			}},
		},
	}}
	return crd
}

// TestCRDAndItsObjects: a CRD propagated by a ClusterPropagationPolicy is
// served by the members it names; the detector starts watching the new
// kind in the control plane, and a Widget propagated by a
// PropagationPolicy reaches those members and follows updates and the
// delete.
func TestCRDAndItsObjects(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-crd")
	targets := []string{"member1", "member2"}
	crd := widgetCRD()
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-widgets-crd"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.GetName()}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: targets}},
		},
	}
	create(t, cpp)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), cpp) })
	create(t, crd)
	t.Cleanup(func() { _ = cp.Delete(context.Background(), widgetCRD()) })
	create(t, propagationPolicy(ns, "widgets", targets, policyv1alpha1.ResourceSelector{APIVersion: "e2e.flotilla.io/v1", Kind: "Widget"}))

	newWidget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widgetGVK)
		return u
	}
	// The scheduler places a Widget only on clusters whose status lists the
	// kind, and, as Karmada's, does not reschedule when a cluster starts
	// serving it: wait for the members to report it first, as a Karmada
	// user (and Karmada's own e2e) does.
	for _, name := range targets {
		eventually(t, name+" reporting the Widget API", func(ctx context.Context) (bool, error) {
			cluster := &clusterv1alpha1.Cluster{}
			if err := cp.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
				return false, err
			}
			return servesKind(cluster, widgetGVK), nil
		})
	}
	// The control plane serves the kind once the CRD is established.
	w := newWidget()
	w.SetNamespace(ns)
	w.SetName("gear")
	w.Object["spec"] = map[string]any{"size": int64(3), "color": "red"}
	eventually(t, "a Widget accepted by the control plane", func(ctx context.Context) (bool, error) {
		err := cp.Create(ctx, w.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return true, nil
		}
		return err == nil, err
	})

	key := client.ObjectKeyFromObject(w)
	color := func(want string) func(*unstructured.Unstructured) bool {
		return func(got *unstructured.Unstructured) bool {
			c, _, _ := unstructured.NestedString(got.Object, "spec", "color")
			return c == want
		}
	}
	inMembers(t, targets, key, newWidget, "the red Widget", color("red"))
	absentFrom(t, []string{"member3"}, client.ObjectKey{Name: crd.GetName()}, crd.DeepCopy())

	update(t, w, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "blue", "spec", "color")
	})
	inMembers(t, targets, key, newWidget, "the blue Widget", color("blue"))
	remove(t, w)
	goneFrom(t, targets, key, newWidget())
}

// servesKind reports whether the cluster's status lists gvk among its APIs.
func servesKind(cluster *clusterv1alpha1.Cluster, gvk schema.GroupVersionKind) bool {
	for _, e := range cluster.Status.APIEnablements {
		if e.GroupVersion != gvk.GroupVersion().String() {
			continue
		}
		for _, r := range e.Resources {
			if r.Kind == gvk.Kind {
				return true
			}
		}
	}
	return false
}
