package packedjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

func deployment(i int) []byte {
	b, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": "bench", "labels": map[string]any{"app": fmt.Sprintf("app-%05d", i)}},
		"spec": map[string]any{"replicas": 3, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1.0", "terminationMessagePath": "/dev/termination-log"}},
		}}},
		"status": map[string]any{"replicas": 3, "readyReplicas": 3},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"small", []byte(`{}`)},
		{"deployment", deployment(1)},
		{"repetitive", bytes.Repeat([]byte(`{"a":"b"},`), 2000)},
	}
	for _, tt := range tests {
		d, err := Pack(tt.raw)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := d.Unpack()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !bytes.Equal(got, tt.raw) && len(tt.raw) > 0 {
			t.Errorf("%s: unpacked %q, want %q", tt.name, got, tt.raw)
		}
		if len(tt.raw) > 1000 && d.Size() >= len(tt.raw)/2 {
			t.Errorf("%s: packed %d of %d bytes", tt.name, d.Size(), len(tt.raw))
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			raw := deployment(i)
			for range 50 {
				d, err := Pack(raw)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := d.Unpack()
				if err != nil || !bytes.Equal(got, raw) {
					t.Errorf("round trip %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCorruptInput(t *testing.T) {
	if _, err := (Doc{packed: []byte("not deflate data at all")}).Unpack(); err == nil {
		t.Error("unpacking garbage succeeded")
	}
}

func BenchmarkPack(b *testing.B) {
	raw := deployment(1)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Pack(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnpack(b *testing.B) {
	d, err := Pack(deployment(1))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := d.Unpack(); err != nil {
			b.Fatal(err)
		}
	}
}
