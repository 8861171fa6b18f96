package writecost

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// templateWrite is one write that propagating a template makes, counted
// per template, and the case and operation of this benchmark that weighs
// it.
type templateWrite struct {
	what  string
	kind  string
	op    op
	count int
	// member: written to a member's API server, not the control plane's.
	member bool
}

// templateWrites are the writes one Deployment propagated to 3 members
// costs, besides events: what the propagation benchmark counts (13 to the
// control plane, one apply per member), each weighed by the nearest case
// here. The detector's claim is a merge patch and the scheduler's schedule
// a merge patch of the binding's spec: both are weighed as updates of the
// whole object, which is what the API server does with them after merging.
// The member objects are written to this control plane's API server, a
// kube-apiserver like the members'.
var templateWrites = []templateWrite{
	{what: "the user's create of the template", kind: "Deployment", op: opCreate, count: 1},
	{what: "the detector's claim of the template", kind: "Deployment", op: opUpdate, count: 1},
	{what: "the detector's binding", kind: "ResourceBinding", op: opCreate, count: 1},
	{what: "the scheduler's schedule", kind: "ResourceBinding", op: opUpdate, count: 1},
	{what: "the scheduler's Scheduled condition", kind: "ResourceBinding", op: opStatus, count: 1},
	{what: "a Work per member", kind: "Work", op: opCreate, count: 3},
	{what: "each Work's applied status", kind: "Work", op: opStatus, count: 3},
	{what: "the binding's aggregated status", kind: "ResourceBinding", op: opStatus, count: 1},
	{what: "the template's aggregated status", kind: "Deployment", op: opStatus, count: 1},
	{what: "the member object, applied in each member", kind: "Deployment", op: opApplyCreate, count: 3, member: true},
}

// floor is what the writes of one template cost the API servers and etcd
// at the measured per-request costs: the least the whole federation can
// spend per template on Karmada's API, before any controller, watch, read
// or event.
type floor struct {
	controlPlane, members, etcd time.Duration
}

func (f floor) total() time.Duration { return f.controlPlane + f.members + f.etcd }

// costKey names a measurement: a case's kind, in JSON, and an operation.
type costKey struct {
	kind string
	op   op
}

// floorOf adds up templateWrites from the measurements of each kind in
// JSON (the encoding the components write custom resources in). A write
// whose case or operation was not measured is named in missing, rather
// than counted as free.
func floorOf(costs map[costKey]measurement) (f floor, missing []string) {
	for _, w := range templateWrites {
		m, ok := costs[costKey{w.kind, w.op}]
		if !ok || m.requests == 0 {
			missing = append(missing, fmt.Sprintf("%s (%s %s)", w.what, w.kind, w.op))
			continue
		}
		api := m.apiserver * time.Duration(w.count) / time.Duration(m.requests)
		if w.member {
			f.members += api
		} else {
			f.controlPlane += api
		}
		f.etcd += m.etcd * time.Duration(w.count) / time.Duration(m.requests)
	}
	return f, missing
}

// floorTable shows the floor and the writes it is made of.
func floorTable(setting string, f floor, costs map[costKey]measurement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the writes of one template propagated to 3 members (%s), at the costs measured above:\n", setting)
	for _, w := range templateWrites {
		m := costs[costKey{w.kind, w.op}]
		fmt.Fprintf(&b, "  %d × %-45s %-16s %-13s apiserver %6.0f µs  etcd %5.0f µs\n", w.count, w.what, w.kind, w.op,
			float64(w.count)*perRequestMicros(m.apiserver, m.requests), float64(w.count)*perRequestMicros(m.etcd, m.requests))
	}
	fmt.Fprintf(&b, "  floor: control-plane apiserver %.1f ms, members' apiservers %.1f ms, etcd %.1f ms; %.1f ms per template\n",
		millis(f.controlPlane), millis(f.members), millis(f.etcd), millis(f.total()))
	return b.String()
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func TestFloorOf(t *testing.T) {
	// Every write measured at 1 ms of API server and 100 µs of etcd a
	// request, over 4 requests.
	all := map[costKey]measurement{}
	for _, w := range templateWrites {
		all[costKey{w.kind, w.op}] = measurement{op: w.op, requests: 4, apiserver: 4 * time.Millisecond, etcd: 400 * time.Microsecond}
	}
	without := func(k costKey) map[costKey]measurement {
		out := maps.Clone(all)
		delete(out, k)
		return out
	}
	unanswered := maps.Clone(all)
	unanswered[costKey{"Work", opStatus}] = measurement{op: opStatus}
	tests := []struct {
		name        string
		costs       map[costKey]measurement
		want        floor
		wantMissing int
	}{
		{"every write measured", all, floor{controlPlane: 13 * time.Millisecond, members: 3 * time.Millisecond, etcd: 1600 * time.Microsecond}, 0},
		{"a write not measured is named, not free", without(costKey{"ResourceBinding", opCreate}),
			floor{controlPlane: 12 * time.Millisecond, members: 3 * time.Millisecond, etcd: 1500 * time.Microsecond}, 1},
		{"an operation that took no request is named", unanswered,
			floor{controlPlane: 10 * time.Millisecond, members: 3 * time.Millisecond, etcd: 1300 * time.Microsecond}, 1},
	}
	for _, tt := range tests {
		got, missing := floorOf(tt.costs)
		if got != tt.want || len(missing) != tt.wantMissing {
			t.Errorf("%s: floorOf = %+v, missing %q; want %+v and %d missing", tt.name, got, missing, tt.want, tt.wantMissing)
		}
	}
}
