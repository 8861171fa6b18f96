package detector

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
	"github.com/flotilla-io/flotilla/internal/packedjson"
)

// cachedTemplate is a resource template as the detector's informers keep
// it: packed (its metadata decoded, the rest deflated JSON decoded when a
// reconcile or a reader needs it, since the detector holds every template
// of the control plane), with what the filter decided and a digest of its
// spec, both worked out when it arrives.
type cachedTemplate struct {
	*packedjson.Object
	// ignored is the filter's verdict (templateFilter.ignored).
	ignored bool
	// digest changes exactly when the template changes in something other
	// than its status and the API server's bookkeeping (specDigest).
	digest uint64
}

var _ runtime.Object = &cachedTemplate{}

// DeepCopyObject copies the metadata; the packed JSON is shared.
func (c *cachedTemplate) DeepCopyObject() runtime.Object {
	return &cachedTemplate{Object: c.DeepCopy(), ignored: c.ignored, digest: c.digest}
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
	digest, err := specDigest(u)
	if err != nil {
		return nil, err
	}
	packed, err := packedjson.PackObject(u, u.GetLabels(), u.GetAnnotations())
	if err != nil {
		return nil, err
	}
	return &cachedTemplate{Object: packed, ignored: f.ignored(u), digest: digest}, nil
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
