package detector

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/packedjson"
)

// cachedTemplate is a resource template as the detector's informers keep
// it: what keys, indexes, selectors and the filter read, decided or copied
// when it arrives, and the whole template as deflated JSON, decoded when a
// reconcile or a reader needs it. Decoded objects (maps of maps) take many
// times the memory of their deflated JSON, and the detector holds every
// template of the control plane.
type cachedTemplate struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// ignored is the filter's verdict (templateFilter.ignored).
	ignored bool
	// digest changes exactly when the template changes in something other
	// than its status and the API server's bookkeeping (specDigest).
	digest uint64
	raw    packedjson.Doc
}

var _ runtime.Object = &cachedTemplate{}

// DeepCopyObject copies the metadata; the JSON is never changed in place.
func (c *cachedTemplate) DeepCopyObject() runtime.Object {
	out := &cachedTemplate{TypeMeta: c.TypeMeta, ignored: c.ignored, digest: c.digest, raw: c.raw}
	c.DeepCopyInto(&out.ObjectMeta)
	return out
}

// template decodes the template; the caller owns the result.
func (c *cachedTemplate) template() (*unstructured.Unstructured, error) {
	raw, err := c.raw.Unpack()
	if err != nil {
		return nil, fmt.Errorf("reading cached %s %s: %w", c.Kind, c.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decoding cached %s %s: %w", c.Kind, c.Name, err)
	}
	return u, nil
}

// compact turns a template from a watch into a cachedTemplate, without its
// managed fields, which nothing here reads.
func (f templateFilter) compact(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	encoded, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s for the cache: %w", u.GetKind(), u.GetName(), err)
	}
	raw, err := packedjson.Pack(encoded)
	if err != nil {
		return nil, fmt.Errorf("packing %s %s for the cache: %w", u.GetKind(), u.GetName(), err)
	}
	digest, err := specDigest(u)
	if err != nil {
		return nil, err
	}
	return &cachedTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         u.GetNamespace(),
			Name:              u.GetName(),
			UID:               u.GetUID(),
			ResourceVersion:   u.GetResourceVersion(),
			Generation:        u.GetGeneration(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
			Labels:            u.GetLabels(),
			Annotations:       u.GetAnnotations(),
		},
		ignored: f.ignored(u),
		digest:  digest,
		raw:     raw,
	}, nil
}

// cachedTemplateOf reads an item of a template informer's store.
func cachedTemplateOf(item any) (*cachedTemplate, bool) {
	c, ok := item.(*cachedTemplate)
	return c, ok
}

// ignoredMetadata are the fields whose changes alone never require the
// binding to be rebuilt.
var ignoredMetadata = map[string]bool{"resourceVersion": true, "managedFields": true, "generation": true}

// specDigest hashes everything of u but its status and the API server's
// bookkeeping (ignoredMetadata). Status is what the binding-status
// controller writes back into templates: reacting to it would rebuild every
// binding on every member status change. encoding/json sorts map keys, so
// equal content gives equal digests.
func specDigest(u *unstructured.Unstructured) (uint64, error) {
	content := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "status" {
			content[k] = v
		}
	}
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		kept := maps.Clone(meta)
		for k := range ignoredMetadata {
			delete(kept, k)
		}
		content["metadata"] = kept
	}
	b, err := json.Marshal(content)
	if err != nil {
		return 0, fmt.Errorf("hashing %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64(), nil
}

// selectable is what resource selectors look at in the template.
func (c *cachedTemplate) selectable() policymatch.Template {
	return policymatch.Template{APIVersion: c.APIVersion, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name, Labels: c.Labels}
}
