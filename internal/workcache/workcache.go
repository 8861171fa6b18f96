// Package workcache keeps Works small in the controller-manager's cache. A
// federation holds one Work per template and member, each with the whole
// template as its manifest and the member's status of it; kept as JSON they
// are the biggest part of the controller-manager's memory. In the cache
// both are deflated (packedjson.PackRaw): a Work read from the cache must go
// through Expand before its manifests or statuses are read or it is written
// back.
package workcache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/packedjson"
)

// Options are the controller-manager's cache options: no managed fields in
// any object (no controller reads them, and they are often the biggest part
// of a Work or binding), and Works packed.
func Options() cache.Options {
	strip := cache.TransformStripManagedFields()
	return cache.Options{
		DefaultTransform: strip,
		ByObject: map[client.Object]cache.ByObject{
			&workv1alpha1.Work{}: {Transform: func(obj any) (any, error) {
				obj, err := strip(obj)
				if err != nil {
					return nil, err
				}
				return Pack(obj)
			}},
		},
	}
}

// Pack is a cache transform: it deflates the manifests and manifest
// statuses of a Work, in place, and passes anything else through.
func Pack(obj any) (any, error) {
	w, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return obj, nil
	}
	for _, r := range raws(w) {
		packed, err := packedjson.PackRaw(r.ext.Raw)
		if err != nil {
			return nil, fmt.Errorf("packing %s of Work %s/%s: %w", r.what(), w.Namespace, w.Name, err)
		}
		r.ext.Raw, r.ext.Object = packed, nil
	}
	return w, nil
}

// Expand restores, in place, the JSON of a Work's manifests and manifest
// statuses packed by the cache. A Work that was never packed is left as it
// is, so callers need not know where it came from.
func Expand(w *workv1alpha1.Work) error {
	for _, r := range raws(w) {
		raw, err := packedjson.UnpackRaw(r.ext.Raw)
		if err != nil {
			return fmt.Errorf("reading %s of Work %s/%s: %w", r.what(), w.Namespace, w.Name, err)
		}
		r.ext.Raw = raw
	}
	return nil
}

// StatusJSON returns the JSON of a manifest status of a Work read from the
// cache, without changing the Work; nil when it has none.
func StatusJSON(ms *workv1alpha1.ManifestStatus) ([]byte, error) {
	if ms.Status == nil || len(ms.Status.Raw) == 0 {
		return nil, nil
	}
	raw, err := packedjson.UnpackRaw(ms.Status.Raw)
	if err != nil {
		return nil, fmt.Errorf("reading status of manifest %d: %w", ms.Identifier.Ordinal, err)
	}
	if !packedjson.IsPackedRaw(ms.Status.Raw) {
		raw = bytes.Clone(raw) // the cache's own bytes
	}
	return raw, nil
}

// packedRaw is one RawExtension of a Work that the cache packs: manifest
// i, or the status of manifest status i.
type packedRaw struct {
	status bool
	i      int
	ext    *runtime.RawExtension
}

// what names the RawExtension in errors.
func (r packedRaw) what() string {
	if r.status {
		return fmt.Sprintf("status %d", r.i)
	}
	return fmt.Sprintf("manifest %d", r.i)
}

// raws lists the manifests and manifest statuses of w.
func raws(w *workv1alpha1.Work) []packedRaw {
	out := make([]packedRaw, 0, len(w.Spec.Workload.Manifests)+len(w.Status.ManifestStatuses))
	for i := range w.Spec.Workload.Manifests {
		out = append(out, packedRaw{i: i, ext: &w.Spec.Workload.Manifests[i].RawExtension})
	}
	for i, ms := range w.Status.ManifestStatuses {
		if ms.Status != nil {
			out = append(out, packedRaw{status: true, i: i, ext: ms.Status})
		}
	}
	return out
}

// SameManifest reports whether manifest i of w, packed or not, is the
// rendered one. The API server re-encodes what it stores, so equal bytes
// are the common case; otherwise both are compared as decoded values. A
// stored manifest that cannot be read is one to rewrite: it compares
// unequal. The error is for a rendered manifest that is not JSON.
func SameManifest(w *workv1alpha1.Work, i int, rendered []byte) (bool, error) {
	stored, unpackErr := packedjson.UnpackRaw(w.Spec.Workload.Manifests[i].Raw)
	if unpackErr == nil && bytes.Equal(stored, rendered) {
		return true, nil
	}
	want, err := decodeJSON(rendered)
	if err != nil {
		return false, fmt.Errorf("decoding rendered manifest: %w", err)
	}
	have, decodeErr := decodeJSON(stored)
	return unpackErr == nil && decodeErr == nil && reflect.DeepEqual(have, want), nil
}

// decodeJSON keeps numbers as written, so that large integers compare
// exactly.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
