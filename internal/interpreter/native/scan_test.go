package native

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanInts(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]int64 // nil: errScan
	}{
		{`{}`, map[string]int64{}},
		{` {"replicas": 3, "ready":-1 } `, map[string]int64{"replicas": 3, "ready": -1}},
		{`{"a":"x\"y","b":[1,{"c":[true,false,null]}],"d":{"e":"}"},"n":7,"f":1.5,"g":2e3}`, map[string]int64{"n": 7}},
		{`{"a":1,}`, nil},
		{`{"a":01x}`, nil},
		{`{"a":1} x`, nil},
		{`{"a\u0062":1}`, nil},
		{`[1]`, nil},
		{`{"a":99999999999999999999}`, nil},
		{`{"a":tru}`, nil},
		{`{"a":"unterminated}`, nil},
	}
	for _, tt := range tests {
		got := map[string]int64{}
		err := scanInts([]byte(tt.in), func(k []byte, n int64, isInt bool) bool {
			if isInt {
				got[string(k)] = n
			}
			return true
		})
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s: scanned %v, want errScan", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
		if !json.Valid([]byte(tt.in)) {
			t.Errorf("%s: scanned invalid JSON", tt.in)
		}
	}
}
