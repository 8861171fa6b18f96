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

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/packedjson"
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
	for i := range w.Spec.Workload.Manifests {
		m := &w.Spec.Workload.Manifests[i]
		packed, err := packedjson.PackRaw(m.Raw)
		if err != nil {
			return nil, fmt.Errorf("packing manifest %d of Work %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		m.Raw, m.Object = packed, nil
	}
	for i := range w.Status.ManifestStatuses {
		s := w.Status.ManifestStatuses[i].Status
		if s == nil {
			continue
		}
		packed, err := packedjson.PackRaw(s.Raw)
		if err != nil {
			return nil, fmt.Errorf("packing status %d of Work %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		s.Raw, s.Object = packed, nil
	}
	return w, nil
}

// Expand restores, in place, the JSON of a Work's manifests and manifest
// statuses packed by the cache. A Work that was never packed is left as it
// is, so callers need not know where it came from.
func Expand(w *workv1alpha1.Work) error {
	for i := range w.Spec.Workload.Manifests {
		m := &w.Spec.Workload.Manifests[i]
		raw, err := packedjson.UnpackRaw(m.Raw)
		if err != nil {
			return fmt.Errorf("reading manifest %d of Work %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		m.Raw = raw
	}
	for i := range w.Status.ManifestStatuses {
		s := w.Status.ManifestStatuses[i].Status
		if s == nil {
			continue
		}
		raw, err := packedjson.UnpackRaw(s.Raw)
		if err != nil {
			return fmt.Errorf("reading status %d of Work %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		s.Raw = raw
	}
	return nil
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
