package execution

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	return packedjson.PackObject(u)
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
