package packedjson

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is a Kubernetes object as a cache keeps it: the metadata that keys,
// indexes, selectors and event handlers read, and the whole object as a
// deflated JSON Doc, decoded when a controller looks at it. A decoded object
// (maps of maps) takes many times the memory of its deflated JSON.
type Object struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	doc Doc
}

var _ runtime.Object = &Object{}

// PackObject packs u as it is; u is only read. Of u's labels and
// annotations, the Object keeps decoded those given, what its readers look
// up without unpacking; all of them stay in the packed copy.
func PackObject(u *unstructured.Unstructured, labels, annotations map[string]string) (*Object, error) {
	encoded, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	doc, err := Pack(encoded)
	if err != nil {
		return nil, fmt.Errorf("packing %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return &Object{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         u.GetNamespace(),
			Name:              u.GetName(),
			UID:               u.GetUID(),
			ResourceVersion:   u.GetResourceVersion(),
			Generation:        u.GetGeneration(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
			Labels:            labels,
			Annotations:       annotations,
		},
		doc: doc,
	}, nil
}

// DeepCopyObject copies the metadata; the packed JSON is never changed in
// place and is shared.
func (o *Object) DeepCopyObject() runtime.Object {
	return o.DeepCopy()
}

// DeepCopy is DeepCopyObject, typed.
func (o *Object) DeepCopy() *Object {
	out := &Object{TypeMeta: o.TypeMeta, doc: o.doc}
	o.DeepCopyInto(&out.ObjectMeta)
	return out
}

// Unstructured decodes the object; the caller owns the result.
func (o *Object) Unstructured() (*unstructured.Unstructured, error) {
	raw, err := o.doc.Unpack()
	if err != nil {
		return nil, fmt.Errorf("reading cached %s %s: %w", o.Kind, o.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding cached %s %s: %w", o.Kind, o.Name, err)
	}
	return u, nil
}
