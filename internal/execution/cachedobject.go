package execution

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/packedjson"
)

// compactForCache turns a member object from a watch into a
// packedjson.Object, dropping what neither controller reads: managed fields
// (often the biggest part of an object) and kubectl's last-applied copy. A
// federation keeps one member object per template and member.
func compactForCache(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(u.Object, "metadata", "annotations", lastAppliedAnnotation)
	// Decoded outside the packed copy, only what the work-status
	// controller's event handler reads: the Work an object came from.
	// Every label and annotation decoded would take more than the packed copy.
	return packedjson.PackObject(u, nil, workOf(u))
}

// workOf keeps the annotations that name the Work of a member object.
func workOf(u *unstructured.Unstructured) map[string]string {
	ns, _, _ := unstructured.NestedString(u.Object, "metadata", "annotations", workv1alpha1.WorkNamespaceAnnotation)
	name, _, _ := unstructured.NestedString(u.Object, "metadata", "annotations", workv1alpha1.WorkNameAnnotation)
	if ns == "" && name == "" {
		return nil
	}
	return map[string]string{workv1alpha1.WorkNamespaceAnnotation: ns, workv1alpha1.WorkNameAnnotation: name}
}

// FromCache decodes an item of a managed-object informer's store: a
// packedjson.Object, or an object the informer kept as it came.
func FromCache(item any) (*unstructured.Unstructured, error) {
	switch o := item.(type) {
	case *packedjson.Object:
		return o.Unstructured()
	case *unstructured.Unstructured:
		return o.DeepCopy(), nil
	}
	return nil, fmt.Errorf("unexpected %T in the member object cache", item)
}
