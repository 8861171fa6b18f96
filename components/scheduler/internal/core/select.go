package core

import (
	"cmp"
	"slices"
	"strconv"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Candidate is a cluster that passed the filters, with what selection and
// assignment weigh.
type Candidate struct {
	// Cluster is the cluster.
	Cluster *cache.ClusterInfo
	// Name is the cluster's name.
	Name string
	// Score is the weighted sum of the score plugins.
	Score int64
	// Tier is the affinity tier the cluster matched: 0 for the primary
	// affinity, 1.. for overflow affinities.
	Tier int
	// Current is the replicas the binding has there now.
	Current int32
	// IsCurrent says the cluster is in the current schedule, even with 0
	// replicas.
	IsCurrent bool
	// Avail is how many more replicas (or component sets) fit there, not
	// counting Current. Only set for strategies that look at capacity.
	Avail int64
	// Weight is the static weight (StaticWeighted only).
	Weight int64
}

// capacity is what selection may count on in the cluster: its free room
// plus what the binding already holds there.
func (c *Candidate) capacity() int64 { return c.Avail + int64(c.Current) }

// spreadKind is what a spread constraint groups clusters by.
type spreadKind int

const (
	spreadByCluster spreadKind = iota
	spreadByRegion
	spreadByZone
	spreadByProvider
	spreadByLabel
)

// level is one spread constraint over groups larger than a cluster.
type level struct {
	kind       spreadKind
	label      string
	minGroups  int
	maxGroups  int
	chosen     []string // group names chosen, best first
	chosenSet  map[string]struct{}
	groupCount int
}

func (l *level) describe() string {
	switch l.kind {
	case spreadByRegion:
		return "region"
	case spreadByZone:
		return "zone"
	case spreadByProvider:
		return "provider"
	case spreadByLabel:
		return "value of label " + l.label
	}
	return "cluster"
}

// values returns the cluster's group names for the level; buf avoids an
// allocation for single-valued fields.
func (l *level) values(c *cache.ClusterInfo, buf *[1]string) []string {
	switch l.kind {
	case spreadByZone:
		return c.Zones
	case spreadByRegion:
		buf[0] = c.Cluster.Spec.Region
	case spreadByProvider:
		buf[0] = c.Cluster.Spec.Provider
	case spreadByLabel:
		buf[0] = c.Cluster.Labels[l.label]
	default:
		buf[0] = c.Cluster.Name
	}
	return buf[:]
}

func kindOf(sc *policyv1alpha1.SpreadConstraint) spreadKind {
	if sc.SpreadByLabel != "" {
		return spreadByLabel
	}
	switch sc.SpreadByField {
	case policyv1alpha1.SpreadByFieldRegion:
		return spreadByRegion
	case policyv1alpha1.SpreadByFieldZone:
		return spreadByZone
	case policyv1alpha1.SpreadByFieldProvider:
		return spreadByProvider
	}
	return spreadByCluster
}

type group struct {
	name     string
	capacity int64
}

// Select chooses the clusters that satisfy the spread constraints. cands
// must be ordered by preference (best first); the result keeps that order.
// need is the replica count the chosen clusters must be able to hold, or
// negative when capacity does not matter (Duplicated, static weights).
//
// Constraints over regions, zones, providers or label values pick groups
// coarse to fine: as many groups as maxGroups allows (all when 0), the most
// preferred first, swapping in roomier groups only when the preferred ones
// cannot hold need. The cluster constraint then picks clusters within the
// chosen groups: first the best cluster of every chosen group so that each
// group is really used, then the next best up to maxGroups. Whatever the
// path, the result is checked against every constraint.
func Select(cands []Candidate, constraints []policyv1alpha1.SpreadConstraint, need int64) ([]Candidate, error) {
	if len(constraints) == 0 {
		return cands, nil
	}
	var (
		levels        []*level
		hasClusterSC  bool
		minC, maxC    int
		buf           [1]string
		clusterBounds = func(sc *policyv1alpha1.SpreadConstraint) {
			if !hasClusterSC {
				hasClusterSC, minC, maxC = true, sc.MinGroups, sc.MaxGroups
				return
			}
			// Two cluster constraints: both must hold.
			minC = max(minC, sc.MinGroups)
			if sc.MaxGroups > 0 && (maxC == 0 || sc.MaxGroups < maxC) {
				maxC = sc.MaxGroups
			}
		}
	)
	for i := range constraints {
		sc := &constraints[i]
		k := kindOf(sc)
		if k == spreadByCluster {
			clusterBounds(sc)
			continue
		}
		levels = append(levels, &level{kind: k, label: sc.SpreadByLabel, minGroups: sc.MinGroups, maxGroups: sc.MaxGroups})
	}

	// Coarse levels first, so finer groups are chosen within coarser ones.
	for _, l := range levels {
		seen := map[string]struct{}{}
		for i := range cands {
			for _, v := range l.values(cands[i].Cluster, &buf) {
				seen[v] = struct{}{}
			}
		}
		l.groupCount = len(seen)
	}
	slices.SortStableFunc(levels, func(a, b *level) int { return cmp.Compare(a.groupCount, b.groupCount) })

	// cur holds indices into cands, in preference order.
	cur := make([]int, len(cands))
	for i := range cur {
		cur[i] = i
	}
	for _, l := range levels {
		var groups []group
		index := map[string]int{}
		for _, i := range cur {
			for _, v := range l.values(cands[i].Cluster, &buf) {
				gi, ok := index[v]
				if !ok {
					gi = len(groups)
					index[v] = gi
					groups = append(groups, group{name: v})
				}
				groups[gi].capacity += cands[i].capacity()
			}
		}
		if len(groups) < l.minGroups {
			return nil, framework.Unschedulablef("the feasible clusters span %d %s group(s), the spread constraint needs at least %d", len(groups), l.describe(), l.minGroups)
		}
		t := len(groups)
		if l.maxGroups > 0 {
			t = min(t, l.maxGroups)
		}
		if hasClusterSC && maxC > 0 {
			// Every chosen group needs a cluster of its own.
			t = min(t, maxC)
		}
		if t < l.minGroups {
			return nil, framework.Unschedulablef("the spread constraint needs at least %d %s group(s) but at most %d cluster(s) may be used", l.minGroups, l.describe(), maxC)
		}
		picked := pickByCapacity(len(groups), t, func(i int) int64 { return groups[i].capacity }, need)
		if picked == nil {
			return nil, framework.Unschedulablef("no %d %s group(s) can hold %d replicas", t, l.describe(), need)
		}
		l.chosenSet = make(map[string]struct{}, len(picked))
		for _, gi := range picked {
			l.chosen = append(l.chosen, groups[gi].name)
			l.chosenSet[groups[gi].name] = struct{}{}
		}
		next := cur[:0:0]
		for _, i := range cur {
			if l.within(cands[i].Cluster, &buf) {
				next = append(next, i)
			}
		}
		cur = next
	}

	if hasClusterSC {
		var err error
		if cur, err = selectClusters(cands, cur, levels, minC, maxC, need); err != nil {
			return nil, err
		}
	}
	if err := validate(cands, cur, levels, hasClusterSC, minC, maxC); err != nil {
		return nil, err
	}
	out := make([]Candidate, len(cur))
	for j, i := range cur {
		out[j] = cands[i]
	}
	return out, nil
}

// within reports whether all the cluster's groups were chosen; a cluster
// spanning a chosen and an unchosen zone would add a group over the limit.
func (l *level) within(c *cache.ClusterInfo, buf *[1]string) bool {
	vs := l.values(c, buf)
	if len(vs) == 0 {
		return false
	}
	for _, v := range vs {
		if _, ok := l.chosenSet[v]; !ok {
			return false
		}
	}
	return true
}

// selectClusters applies the cluster constraint to cur (indices into
// cands, preference order) and returns the chosen indices in that order.
func selectClusters(cands []Candidate, cur []int, levels []*level, minC, maxC int, need int64) ([]int, error) {
	if len(cur) < minC {
		return nil, framework.Unschedulablef("%d cluster(s) are feasible, the spread constraint needs at least %d", len(cur), minC)
	}
	t := len(cur)
	if maxC > 0 {
		t = min(t, maxC)
	}
	var buf [1]string
	taken := make([]bool, len(cur))
	var mandatory int
	var mandatoryCap int64
	for _, l := range levels {
		covered := map[string]struct{}{}
		for j, i := range cur {
			if taken[j] {
				for _, v := range l.values(cands[i].Cluster, &buf) {
					covered[v] = struct{}{}
				}
			}
		}
		for _, g := range l.chosen {
			if _, ok := covered[g]; ok {
				continue
			}
			for j, i := range cur {
				if taken[j] || !slices.Contains(l.values(cands[i].Cluster, &buf), g) {
					continue
				}
				taken[j] = true
				mandatory++
				mandatoryCap += cands[i].capacity()
				for _, v := range l.values(cands[i].Cluster, &buf) {
					covered[v] = struct{}{}
				}
				break
			}
		}
	}
	if mandatory > t {
		return nil, framework.Unschedulablef("covering the chosen groups takes %d clusters, the spread constraint allows %d", mandatory, t)
	}
	rest := make([]int, 0, len(cur)-mandatory)
	for j := range cur {
		if !taken[j] {
			rest = append(rest, j)
		}
	}
	restNeed := need - mandatoryCap
	if need < 0 {
		restNeed = -1
	} else if restNeed < 0 {
		restNeed = 0
	}
	picked := pickByCapacity(len(rest), t-mandatory, func(r int) int64 { return cands[cur[rest[r]]].capacity() }, restNeed)
	if picked == nil {
		return nil, framework.Unschedulablef("no %d cluster(s) can hold %d replicas", t, need)
	}
	for _, p := range picked {
		taken[rest[p]] = true
	}
	out := make([]int, 0, t)
	for j, i := range cur {
		if taken[j] {
			out = append(out, i)
		}
	}
	return out, nil
}

func pickByCapacity(n, t int, capacity func(int) int64, need int64) []int {
	t = min(t, n)
	top := make([]int, t)
	var sum int64
	for i := range top {
		top[i] = i
		sum += capacity(i)
	}
	if need < 0 || sum >= need {
		return top
	}
	// fill keeps the first k by rank and fills up with the roomiest.
	fill := func(k int) ([]int, bool) {
		rest := make([]int, 0, n-k)
		for i := k; i < n; i++ {
			rest = append(rest, i)
		}
		slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(capacity(b), capacity(a)) })
		picked := make([]int, 0, t)
		var total int64
		for i := 0; i < k; i++ {
			picked = append(picked, i)
			total += capacity(i)
		}
		for _, i := range rest[:t-k] {
			picked = append(picked, i)
			total += capacity(i)
		}
		slices.Sort(picked)
		return picked, total >= need
	}
	// Feasibility only shrinks as k grows, so search for the largest k.
	best, ok := fill(0)
	if !ok {
		return nil
	}
	lo, hi := 0, t-1 // fill(lo) is feasible; fill(t) is not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if p, ok := fill(mid); ok {
			lo, best = mid, p
		} else {
			hi = mid - 1
		}
	}
	return best
}

// validate checks the final choice against every constraint.
func validate(cands []Candidate, selected []int, levels []*level, hasClusterSC bool, minC, maxC int) error {
	if hasClusterSC {
		if len(selected) < minC || (maxC > 0 && len(selected) > maxC) {
			return framework.Unschedulablef("%d cluster(s) chosen, the spread constraint needs between %d and %s", len(selected), minC, bound(maxC))
		}
	}
	var buf [1]string
	for _, l := range levels {
		seen := map[string]struct{}{}
		for _, i := range selected {
			for _, v := range l.values(cands[i].Cluster, &buf) {
				seen[v] = struct{}{}
			}
		}
		if len(seen) < l.minGroups || (l.maxGroups > 0 && len(seen) > l.maxGroups) {
			return framework.Unschedulablef("the chosen clusters span %d %s group(s), the spread constraint needs between %d and %s", len(seen), l.describe(), l.minGroups, bound(l.maxGroups))
		}
	}
	return nil
}

func bound(n int) string {
	if n <= 0 {
		return "any number"
	}
	return strconv.Itoa(n)
}
