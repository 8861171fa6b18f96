package execution

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/packedjson"
)

// CachedObject is a member object as the managed-object informers keep it:
// the metadata that keys, selectors and event handlers read, and the whole
// object as deflated JSON, decoded again when a controller looks at it. A
// decoded object (maps of maps) takes many times the memory of its deflated
// JSON, and a federation keeps one per template and member.
type CachedObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	raw packedjson.Doc
}

var _ runtime.Object = &CachedObject{}

// DeepCopyObject copies the metadata; the JSON is never changed in place.
func (c *CachedObject) DeepCopyObject() runtime.Object {
	out := &CachedObject{TypeMeta: c.TypeMeta, raw: c.raw}
	c.DeepCopyInto(&out.ObjectMeta)
	return out
}

// Object decodes the member object; the caller owns the result.
func (c *CachedObject) Object() (*unstructured.Unstructured, error) {
	raw, err := c.raw.Unpack()
	if err != nil {
		return nil, fmt.Errorf("reading cached %s %s: %w", c.Kind, c.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding cached %s %s/%s: %w", c.Kind, c.Namespace, c.Name, err)
	}
	return u, nil
}

// compactForCache turns a member object from a watch into a CachedObject,
// dropping what neither controller reads: managed fields (often the
// biggest part of an object) and kubectl's last-applied copy.
func compactForCache(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	annotations := u.GetAnnotations()
	if annotations[lastAppliedAnnotation] != "" {
		delete(annotations, lastAppliedAnnotation)
		u.SetAnnotations(annotations)
	}
	encoded, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s for the cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	raw, err := packedjson.Pack(encoded)
	if err != nil {
		return nil, fmt.Errorf("packing %s %s for the cache: %w", u.GetKind(), u.GetName(), err)
	}
	c := &CachedObject{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         u.GetNamespace(),
			Name:              u.GetName(),
			UID:               u.GetUID(),
			ResourceVersion:   u.GetResourceVersion(),
			Generation:        u.GetGeneration(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
			Labels:            u.GetLabels(),
			Annotations:       annotations,
		},
		raw: raw,
	}
	return c, nil
}

// FromCache decodes an item of a managed-object informer's store: a
// CachedObject, or an object the informer kept as it came.
func FromCache(item any) (*unstructured.Unstructured, error) {
	switch o := item.(type) {
	case *CachedObject:
		return o.Object()
	case *unstructured.Unstructured:
		return o.DeepCopy(), nil
	}
	return nil, fmt.Errorf("unexpected %T in the member object cache", item)
}
