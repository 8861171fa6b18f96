package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

// propertyCase is one generated assignment problem.
type propertyCase struct {
	strategy core.Strategy
	cands    []core.Candidate
	replicas int32
}

func (p propertyCase) String() string {
	s := fmt.Sprintf("%s replicas=%d:", p.strategy, p.replicas)
	for _, c := range p.cands {
		s += fmt.Sprintf(" %s(w=%d avail=%d cur=%d tier=%d)", c.Name, c.Weight, c.Avail, c.Current, c.Tier)
	}
	return s
}

// generator makes reproducible random cases: the seed is fixed, so a
// failure names the iteration to replay.
type generator struct {
	r     *rand.Rand
	infos []*cache.ClusterInfo
}

func newGenerator(seed uint64) *generator {
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := range 12 {
		g.infos = append(g.infos, fixture.Cluster(fmt.Sprintf("m%02d", i)).Info())
	}
	return g
}

func (g *generator) candidates(withTiers bool) []core.Candidate {
	n := 1 + g.r.IntN(len(g.infos))
	perm := g.r.Perm(len(g.infos))[:n]
	out := make([]core.Candidate, n)
	for i, p := range perm {
		info := g.infos[p]
		out[i] = core.Candidate{Cluster: info, Name: info.Name(), Weight: int64(1 + g.r.IntN(10)), Avail: int64(g.r.IntN(40))}
		if withTiers {
			out[i].Tier = g.r.IntN(3)
		}
	}
	return out
}

func sum(t []workv1alpha2.TargetCluster) int64 {
	var s int64
	for _, tc := range t {
		s += int64(tc.Replicas)
	}
	return s
}

func asMap(t []workv1alpha2.TargetCluster) map[string]int32 {
	m := map[string]int32{}
	for _, tc := range t {
		m[tc.Name] = tc.Replicas
	}
	return m
}

// withCurrent copies cands with Current (and IsCurrent) from a result.
func withCurrent(cands []core.Candidate, result []workv1alpha2.TargetCluster) []core.Candidate {
	m := asMap(result)
	out := make([]core.Candidate, len(cands))
	for i, c := range cands {
		c.Current = m[c.Name]
		c.IsCurrent = c.Current > 0
		out[i] = c
	}
	return out
}

const iterations = 3000

func TestPropertyReplicasSumAndDeterminism(t *testing.T) {
	g := newGenerator(1)
	strategies := []core.Strategy{core.Duplicated, core.StaticWeighted, core.DynamicWeighted, core.Aggregated}
	for i := range iterations {
		pc := propertyCase{strategy: strategies[i%len(strategies)], cands: g.candidates(i%3 == 0), replicas: int32(1 + g.r.IntN(60))}
		if pc.strategy == core.StaticWeighted || pc.strategy == core.Duplicated {
			for j := range pc.cands {
				pc.cands[j].Tier = 0
			}
		}
		got, err := core.Assign(pc.strategy, pc.cands, pc.replicas, false)
		if err != nil {
			var room int64
			for _, c := range pc.cands {
				room += c.Avail
			}
			if pc.strategy.String() == "DynamicWeighted" || pc.strategy == core.Aggregated {
				if room >= int64(pc.replicas) {
					t.Fatalf("iteration %d: %v: unschedulable with room %d: %v", i, pc, room, err)
				}
				continue
			}
			t.Fatalf("iteration %d: %v: %v", i, pc, err)
		}
		switch pc.strategy {
		case core.Duplicated:
			if len(got) != len(pc.cands) {
				t.Fatalf("iteration %d: %v: Duplicated skipped clusters: %v", i, pc, got)
			}
			for _, tc := range got {
				if tc.Replicas != pc.replicas {
					t.Fatalf("iteration %d: %v: Duplicated gave %s %d", i, pc, tc.Name, tc.Replicas)
				}
			}
		default:
			if s := sum(got); s != int64(pc.replicas) {
				t.Fatalf("iteration %d: %v: replicas sum to %d, want %d (%v)", i, pc, s, pc.replicas, got)
			}
		}
		if pc.strategy.String() == "DynamicWeighted" || pc.strategy == core.Aggregated {
			m := asMap(got)
			for _, c := range pc.cands {
				if int64(m[c.Name]) > c.Avail {
					t.Fatalf("iteration %d: %v: %s got %d with room %d", i, pc, c.Name, m[c.Name], c.Avail)
				}
			}
		}
		// Same input, same output, whatever the candidates' order.
		shuffled := append([]core.Candidate(nil), pc.cands...)
		g.r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		again, err := core.Assign(pc.strategy, shuffled, pc.replicas, false)
		if err != nil {
			t.Fatalf("iteration %d: second run failed: %v", i, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("iteration %d: %v: not deterministic (-first +second):\n%s", i, pc, diff)
		}
	}
}

// withinOne checks every weighted cluster holds floor or ceil of its exact
// share n*w/W.
func withinOne(t *testing.T, label string, cands []core.Candidate, n int32, got []workv1alpha2.TargetCluster) {
	t.Helper()
	var total int64
	for _, c := range cands {
		total += c.Weight
	}
	m := asMap(got)
	for _, c := range cands {
		exact := float64(n) * float64(c.Weight) / float64(total)
		if d := float64(m[c.Name]) - exact; d <= -1 || d >= 1 {
			t.Fatalf("%s: %s holds %d, exact share %.3f", label, c.Name, m[c.Name], exact)
		}
	}
}

func TestPropertyStaticWeightsWithinOne(t *testing.T) {
	g := newGenerator(2)
	for i := range iterations {
		cands := g.candidates(false)
		n := int32(1 + g.r.IntN(100))
		got, err := core.Assign(core.StaticWeighted, cands, n, false)
		if err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("iteration %d fresh %v", i, propertyCase{core.StaticWeighted, cands, n})
		withinOne(t, label, cands, n, got)

		// Rescaling from there in steady mode keeps the property.
		n2 := int32(1 + g.r.IntN(100))
		steady, err := core.Assign(core.StaticWeighted, withCurrent(cands, got), n2, false)
		if err != nil {
			t.Fatal(err)
		}
		withinOne(t, fmt.Sprintf("iteration %d steady %d->%d %v", i, n, n2, got), cands, n2, steady)
	}
}

// moves counts replicas that change cluster between two assignments.
func moves(before, after []workv1alpha2.TargetCluster) (added, removed int64) {
	b, a := asMap(before), asMap(after)
	for name, r := range a {
		if d := int64(r) - int64(b[name]); d > 0 {
			added += d
		}
	}
	for name, r := range b {
		if d := int64(r) - int64(a[name]); d > 0 {
			removed += d
		}
	}
	return added, removed
}

func TestPropertySteadyMovesFewest(t *testing.T) {
	g := newGenerator(3)
	for i := range iterations {
		strategy := []core.Strategy{core.StaticWeighted, core.DynamicWeighted, core.Aggregated}[i%3]
		cands := g.candidates(strategy != core.StaticWeighted && i%2 == 0)
		if strategy != core.StaticWeighted {
			for j := range cands {
				cands[j].Avail += 20 // room for scale-ups
			}
		}
		n := int32(1 + g.r.IntN(40))
		var room int64
		for _, c := range cands {
			room += c.Avail
		}
		n2 := int32(1 + g.r.IntN(40))
		if strategy != core.StaticWeighted && room < int64(max(n, n2))+int64(min(n, n2)) {
			continue // not a question of moving replicas
		}
		first, err := core.Assign(strategy, cands, n, false)
		if err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		next, err := core.Assign(strategy, withCurrent(cands, first), n2, false)
		if err != nil {
			t.Fatalf("iteration %d: rescale: %v", i, err)
		}
		added, removed := moves(first, next)
		label := fmt.Sprintf("iteration %d %s %d->%d: %v -> %v", i, strategy, n, n2, first, next)
		switch {
		case n2 >= n:
			if removed != 0 || added != int64(n2-n) {
				t.Fatalf("%s: scale up added %d removed %d", label, added, removed)
			}
		default:
			if added != 0 || removed != int64(n-n2) {
				t.Fatalf("%s: scale down added %d removed %d", label, added, removed)
			}
		}
	}
}
