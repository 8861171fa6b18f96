package core

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Strategy is how replicas are assigned to the selected clusters.
type Strategy int

// Strategies.
const (
	// Duplicated gives every cluster spec.replicas.
	Duplicated Strategy = iota
	// StaticWeighted divides by the static weight list (equal weights
	// without one).
	StaticWeighted
	// DynamicWeighted divides by how many replicas each cluster can hold.
	DynamicWeighted
	// Aggregated packs replicas into as few clusters as fit them.
	Aggregated
)

func (s Strategy) String() string {
	switch s {
	case Duplicated:
		return "Duplicated"
	case StaticWeighted:
		return "StaticWeighted"
	case DynamicWeighted:
		return "DynamicWeighted"
	case Aggregated:
		return "Aggregated"
	}
	return "Strategy(" + strconv.Itoa(int(s)) + ")"
}

// StrategyOf resolves the placement's replica scheduling. Absent means
// Duplicated; an absent type means Divided (the schema default); Divided
// without a preference divides by equal weights.
func StrategyOf(p *policyv1alpha1.Placement) Strategy {
	rs := p.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return Duplicated
	}
	if rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		return Aggregated
	}
	if rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "" {
		return DynamicWeighted
	}
	return StaticWeighted
}

// capacityAware reports whether the strategy looks at free capacity.
func (s Strategy) capacityAware() bool { return s == DynamicWeighted || s == Aggregated }

// Assign decides the replicas of each selected cluster. It is a pure
// function: the same candidates, replicas and mode give the same result,
// sorted by cluster name, without clusters left at zero (except for
// non-workloads, which go everywhere without a count).
//
// In steady mode (fresh false) the current assignment (Candidate.Current)
// is the starting point: scaling up places only the difference, scaling
// down shrinks what is there, so the fewest replicas move. Fresh mode
// (a requested rebalance) ignores where replicas are, except to break ties.
func Assign(strategy Strategy, cands []Candidate, replicas int32, fresh bool) ([]workv1alpha2.TargetCluster, error) {
	if replicas == 0 {
		out := make([]workv1alpha2.TargetCluster, len(cands))
		for i := range cands {
			out[i] = workv1alpha2.TargetCluster{Name: cands[i].Name}
		}
		return sortTargets(out), nil
	}
	switch strategy {
	case Duplicated:
		out := make([]workv1alpha2.TargetCluster, len(cands))
		for i := range cands {
			out[i] = workv1alpha2.TargetCluster{Name: cands[i].Name, Replicas: replicas}
		}
		return sortTargets(out), nil
	case StaticWeighted:
		return assignStatic(cands, int64(replicas), fresh)
	case DynamicWeighted, Aggregated:
		return assignDynamic(cands, int64(replicas), fresh, strategy == Aggregated)
	}
	return nil, framework.Unschedulablef("unknown replica scheduling strategy %s", strategy)
}

func assignStatic(cands []Candidate, n int64, fresh bool) ([]workv1alpha2.TargetCluster, error) {
	shares := make([]share, 0, len(cands))
	for i := range cands {
		if cands[i].Weight <= 0 {
			continue
		}
		shares = append(shares, share{name: cands[i].Name, weight: cands[i].Weight, prev: int64(cands[i].Current)})
	}
	if len(shares) == 0 {
		return nil, framework.Unschedulablef("no feasible cluster has a weight in the static weight list")
	}
	if fresh || !divideSteady(n, shares) {
		divide(n, shares)
	}
	return fromShares(shares), nil
}

// assignDynamic divides by free capacity. Candidates are grouped by
// affinity tier: overflow tiers only take what the tiers before them cannot
// hold, and give replicas back first when scaling down.
func assignDynamic(cands []Candidate, n int64, fresh, aggregated bool) ([]workv1alpha2.TargetCluster, error) {
	tiers := byTier(cands)
	var prevSum int64
	for i := range cands {
		prevSum += int64(cands[i].Current)
	}
	// result is aligned with cands.
	result := make([]int64, len(cands))

	switch {
	case fresh || prevSum == 0:
		// Everything is placed anew; in a rebalance the binding's own
		// replicas free their room first.
		room := func(c *Candidate) int64 { return c.Avail + int64(c.Current) }
		if err := spill(cands, tiers, n, room, aggregated, result); err != nil {
			return nil, err
		}
	case prevSum < n:
		for i := range cands {
			result[i] = int64(cands[i].Current)
		}
		room := func(c *Candidate) int64 { return c.Avail }
		if err := spill(cands, tiers, n-prevSum, room, aggregated, result); err != nil {
			return nil, err
		}
	case prevSum > n:
		// Shrink in proportion to what each cluster has, overflow tiers
		// first.
		excess := prevSum - n
		for t := len(tiers) - 1; t >= 0; t-- {
			var shares []share
			var idx []int
			var held int64
			for _, i := range tiers[t] {
				if cur := int64(cands[i].Current); cur > 0 {
					shares = append(shares, share{name: cands[i].Name, weight: cur, prev: cur})
					idx = append(idx, i)
					held += cur
				}
			}
			cut := min(excess, held)
			excess -= cut
			divide(held-cut, shares)
			for j, sh := range shares {
				result[idx[j]] = sh.result
			}
		}
	default:
		for i := range cands {
			result[i] = int64(cands[i].Current)
		}
	}

	out := make([]workv1alpha2.TargetCluster, 0, min(len(cands), int(n)))
	for i, r := range result {
		if r > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: cands[i].Name, Replicas: int32(min(r, math.MaxInt32))})
		}
	}
	return sortTargets(out), nil
}

// spill places amount replicas tier by tier, each tier taking what its
// room allows, and adds them to result.
func spill(cands []Candidate, tiers [][]int, amount int64, room func(*Candidate) int64, aggregated bool, result []int64) error {
	left := amount
	var total int64
	for _, tier := range tiers {
		var tierRoom int64
		for _, i := range tier {
			tierRoom += max(room(&cands[i]), 0)
		}
		total += tierRoom
		take := min(left, tierRoom)
		if take <= 0 {
			continue
		}
		placeInTier(cands, tier, take, room, aggregated, result)
		left -= take
	}
	if left > 0 {
		return framework.Unschedulablef("they can hold %d more replicas, %d are needed", total, amount)
	}
	return nil
}

// placeInTier divides amount (at most the tier's room) by room and adds it
// to result. Aggregated first narrows the tier to the fewest clusters that
// hold amount: clusters already holding replicas first, then the roomiest.
func placeInTier(cands []Candidate, tier []int, amount int64, room func(*Candidate) int64, aggregated bool, result []int64) {
	members := tier
	if aggregated {
		members = fewest(cands, tier, amount, room)
	}
	shares := make([]share, 0, len(members))
	idx := make([]int, 0, len(members))
	for _, i := range members {
		if r := room(&cands[i]); r > 0 {
			shares = append(shares, share{name: cands[i].Name, weight: r, prev: int64(cands[i].Current)})
			idx = append(idx, i)
		}
	}
	divide(amount, shares)
	for j, sh := range shares {
		result[idx[j]] += sh.result
	}
}

// fewest returns the shortest run of the tier, in Aggregated's order, whose
// room holds amount. Usually one or two clusters do, so it picks the best
// remaining one at a time instead of sorting the whole tier.
func fewest(cands []Candidate, tier []int, amount int64, room func(*Candidate) int64) []int {
	before := func(a, b int) int {
		x, y := &cands[a], &cands[b]
		if x.IsCurrent != y.IsCurrent {
			if x.IsCurrent {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(room(y), room(x)); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	}
	const scanPicks = 16
	taken := make([]bool, len(tier))
	var picked []int
	var sum int64
	for len(picked) < scanPicks && sum < amount {
		best := -1
		for j, i := range tier {
			if !taken[j] && (best < 0 || before(i, tier[best]) < 0) {
				best = j
			}
		}
		if best < 0 {
			return picked
		}
		taken[best] = true
		picked = append(picked, tier[best])
		sum += max(room(&cands[tier[best]]), 0)
	}
	if sum >= amount {
		return picked
	}
	sorted := slices.Clone(tier)
	slices.SortFunc(sorted, before)
	sum = 0
	for i, c := range sorted {
		sum += max(room(&cands[c]), 0)
		if sum >= amount || i == len(sorted)-1 {
			return sorted[:i+1]
		}
	}
	return sorted
}

// byTier groups candidate indices by affinity tier, primary first.
func byTier(cands []Candidate) [][]int {
	maxTier := 0
	for i := range cands {
		maxTier = max(maxTier, cands[i].Tier)
	}
	tiers := make([][]int, maxTier+1)
	if maxTier == 0 {
		all := make([]int, len(cands))
		for i := range all {
			all[i] = i
		}
		tiers[0] = all
		return tiers
	}
	for i := range cands {
		tiers[cands[i].Tier] = append(tiers[cands[i].Tier], i)
	}
	return tiers
}

func fromShares(shares []share) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(shares))
	for _, s := range shares {
		if s.result > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: s.name, Replicas: int32(min(s.result, math.MaxInt32))})
		}
	}
	return sortTargets(out)
}

func sortTargets(t []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	slices.SortFunc(t, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return t
}

// AssignComponents places a multi-component workload. Duplicated copies
// every component everywhere. Divided keeps the workload whole in one
// cluster, because its parts (a job manager and its task managers, a head
// and its workers) only work together: the cluster it runs in, unless
// rebalancing; else the heaviest static weight, or for capacity-aware
// strategies the cluster with room for the most complete sets (Avail).
func AssignComponents(strategy Strategy, cands []Candidate, spec *workv1alpha2.ResourceBindingSpec, fresh bool) ([]workv1alpha2.TargetCluster, error) {
	full := make([]workv1alpha2.ComponentReplicas, len(spec.Components))
	// A cluster's replicas are all the pods it runs for the workload.
	var total int32
	for i, c := range spec.Components {
		full[i] = workv1alpha2.ComponentReplicas{Name: c.Name, Replicas: c.Replicas}
		total += c.Replicas
	}
	if strategy == Duplicated {
		out := make([]workv1alpha2.TargetCluster, len(cands))
		for i := range cands {
			out[i] = workv1alpha2.TargetCluster{Name: cands[i].Name, Replicas: total, Components: slices.Clone(full)}
		}
		return sortTargets(out), nil
	}
	best := -1
	better := func(i, j int) bool { // is cands[i] better than cands[j]
		a, b := &cands[i], &cands[j]
		switch strategy {
		case StaticWeighted:
			if a.Weight != b.Weight {
				return a.Weight > b.Weight
			}
		default:
			if a.capacity() != b.capacity() {
				return a.capacity() > b.capacity()
			}
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Name < b.Name
	}
	for i := range cands {
		c := &cands[i]
		if !fresh && c.IsCurrent {
			best = i
			break
		}
		switch strategy {
		case StaticWeighted:
			if c.Weight <= 0 {
				continue
			}
		default:
			// A rebalance may reuse the room the workload frees.
			room := c.Avail
			if fresh && c.IsCurrent {
				room++
			}
			if room < 1 {
				continue
			}
		}
		if best < 0 || better(i, best) {
			best = i
		}
	}
	if best < 0 {
		if strategy == StaticWeighted {
			return nil, framework.Unschedulablef("no feasible cluster has a weight in the static weight list")
		}
		return nil, framework.Unschedulablef("none can hold a complete set of the %d components", len(spec.Components))
	}
	return []workv1alpha2.TargetCluster{{Name: cands[best].Name, Replicas: total, Components: full}}, nil
}
