package execution

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/packedjson"
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
	u.SetManagedFields(nil)
	if annotations := u.GetAnnotations(); annotations[lastAppliedAnnotation] != "" {
		delete(annotations, lastAppliedAnnotation)
		u.SetAnnotations(annotations)
	}
	o, err := packedjson.PackObject(u)
	if err != nil {
		return nil, err
	}
	// Outside the packed copy, only what the work-status controller's event
	// handler reads: the Work an object came from. Labels and annotations
	// decoded for every member object would take more than the packed copy.
	o.Labels, o.Annotations = nil, workOf(o.Annotations)
	return o, nil
}

// workOf keeps the annotations that name the Work of a member object.
func workOf(annotations map[string]string) map[string]string {
	ns, name := annotations[workv1alpha1.WorkNamespaceAnnotation], annotations[workv1alpha1.WorkNameAnnotation]
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
