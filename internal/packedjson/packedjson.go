// Package packedjson keeps JSON documents deflated in memory. The
// controller-manager caches one copy of every template and of every member
// object it manages; Kubernetes objects deflate to about a quarter of their
// JSON, and packing or unpacking one takes tens of microseconds.
package packedjson

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// Doc is a deflated JSON document. The zero value is an empty document.
type Doc struct {
	packed []byte
}

// Writers and readers hold large buffers: reuse them.
var (
	writers = sync.Pool{New: func() any {
		w, err := flate.NewWriter(io.Discard, flate.BestSpeed)
		if err != nil {
			panic(err) // only for an invalid level
		}
		return w
	}}
	readers = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
)

// Pack deflates raw.
func Pack(raw []byte) (Doc, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw)/3 + 64)
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(raw); err != nil {
		return Doc{}, fmt.Errorf("deflating: %w", err)
	}
	if err := w.Close(); err != nil {
		return Doc{}, fmt.Errorf("deflating: %w", err)
	}
	// Trimmed to its length: the buffer may have grown beyond it.
	return Doc{packed: bytes.Clone(buf.Bytes())}, nil
}

// Unpack inflates the document.
func (d Doc) Unpack() ([]byte, error) {
	if len(d.packed) == 0 {
		return nil, nil
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(d.packed), nil); err != nil {
		return nil, fmt.Errorf("inflating: %w", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("inflating: %w", err)
	}
	return out, nil
}

// Size is how many bytes the packed document takes.
func (d Doc) Size() int { return len(d.packed) }

// rawMagic starts a packed RawExtension. No JSON document starts with a NUL
// byte, so a packed value is never mistaken for JSON or the other way round.
const rawMagic = "\x00pj1"

// PackRaw deflates a JSON value kept in a RawExtension, such as a Work's
// manifest, into bytes that UnpackRaw recognises. Typed objects in a cache
// keep their shape this way; only the RawExtension's bytes change.
func PackRaw(raw []byte) ([]byte, error) {
	if len(raw) == 0 || IsPackedRaw(raw) {
		return raw, nil
	}
	doc, err := Pack(raw)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(rawMagic)+len(doc.packed))
	return append(append(out, rawMagic...), doc.packed...), nil
}

// UnpackRaw returns the JSON of a value packed by PackRaw, and any other
// value as it is.
func UnpackRaw(raw []byte) ([]byte, error) {
	if !IsPackedRaw(raw) {
		return raw, nil
	}
	return Doc{packed: raw[len(rawMagic):]}.Unpack()
}

// IsPackedRaw reports whether raw was packed by PackRaw.
func IsPackedRaw(raw []byte) bool {
	return bytes.HasPrefix(raw, []byte(rawMagic))
}
