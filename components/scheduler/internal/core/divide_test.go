package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func results(shares []share) map[string]int64 {
	out := map[string]int64{}
	for _, s := range shares {
		out[s.name] = s.result
	}
	return out
}

func mkShares(weights map[string]int64, prev map[string]int64) []share {
	var out []share
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if w, ok := weights[name]; ok {
			out = append(out, share{name: name, weight: w, prev: prev[name]})
		}
	}
	return out
}

func TestDivide(t *testing.T) {
	tests := []struct {
		name    string
		n       int64
		weights map[string]int64
		prev    map[string]int64
		want    map[string]int64
	}{
		{"exact", 6, map[string]int64{"a": 2, "b": 1}, nil, map[string]int64{"a": 4, "b": 2}},
		{"remainder to the largest fraction", 4, map[string]int64{"a": 2, "b": 1}, nil, map[string]int64{"a": 3, "b": 1}},
		{"equal fractions go by name", 1, map[string]int64{"a": 1, "b": 1}, nil, map[string]int64{"a": 1, "b": 0}},
		{"equal fractions go by previous replicas", 1, map[string]int64{"a": 1, "b": 1}, map[string]int64{"b": 3}, map[string]int64{"a": 0, "b": 1}},
		{"zero weight gets nothing", 5, map[string]int64{"a": 0, "b": 1}, nil, map[string]int64{"a": 0, "b": 5}},
		{"no weight at all", 5, map[string]int64{"a": 0}, nil, map[string]int64{"a": 0}},
		{"huge weights stay exact", 3, map[string]int64{"a": 1 << 62, "b": 1 << 62, "c": 1 << 62}, nil, map[string]int64{"a": 1, "b": 1, "c": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mkShares(tc.weights, tc.prev)
			divide(tc.n, s)
			if diff := cmp.Diff(tc.want, results(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDivideSteady(t *testing.T) {
	tests := []struct {
		name    string
		n       int64
		weights map[string]int64
		prev    map[string]int64
		want    map[string]int64 // nil: steady division impossible
	}{
		{"scale up adds only", 7, map[string]int64{"a": 1, "b": 1, "c": 1}, map[string]int64{"a": 2, "b": 2, "c": 1},
			map[string]int64{"a": 3, "b": 2, "c": 2}},
		{"scale down removes only", 4, map[string]int64{"a": 1, "b": 1, "c": 1}, map[string]int64{"a": 2, "b": 2, "c": 1},
			map[string]int64{"a": 2, "b": 1, "c": 1}},
		{"unchanged", 5, map[string]int64{"a": 1, "b": 1, "c": 1}, map[string]int64{"a": 1, "b": 2, "c": 2},
			map[string]int64{"a": 1, "b": 2, "c": 2}},
		{"too far from the quotas", 6, map[string]int64{"a": 1, "b": 1}, map[string]int64{"a": 5, "b": 0}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mkShares(tc.weights, tc.prev)
			ok := divideSteady(tc.n, s)
			if tc.want == nil {
				if ok {
					t.Errorf("want no steady division, got %v", results(s))
				}
				return
			}
			if !ok {
				t.Fatal("steady division refused")
			}
			if diff := cmp.Diff(tc.want, results(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
