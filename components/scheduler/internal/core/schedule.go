// Package core is the scheduling algorithm: filter the clusters of a
// snapshot, score them, select clusters under the spread constraints and
// assign replicas. Everything here is a function of the binding and the
// snapshot (and of the estimators, which for the general one is pure too),
// so decisions are reproducible and tested without an API server.
package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/internal/affinity"
)

// Algorithm schedules one binding against one snapshot.
type Algorithm struct {
	framework  *framework.Framework
	estimators []estimator.Estimator
}

// NewAlgorithm returns an algorithm running fw. The general estimator is
// always consulted; extra estimators can only lower its answers.
func NewAlgorithm(fw *framework.Framework, extra ...estimator.Estimator) *Algorithm {
	return &Algorithm{framework: fw, estimators: append([]estimator.Estimator{estimator.General{}}, extra...)}
}

// Input is what a scheduling decision depends on besides the snapshot.
type Input struct {
	// Spec is the binding's spec; read only.
	Spec *workv1alpha2.ResourceBindingSpec
	// ObservedAffinityName is status.schedulerObservingAffinityName: with
	// clusterAffinities, a steady reschedule starts from the term in use so
	// a workload that failed over does not flap back on every change.
	ObservedAffinityName string
	// Fresh ignores where replicas are now (rescheduleTriggeredAt).
	Fresh bool
	// Namespace and Name identify the binding (Namespace empty for a
	// ClusterResourceBinding), for plugins that compare it with others.
	Namespace, Name string
}

// Decision is a successful schedule.
type Decision struct {
	// Clusters is the new spec.clusters, sorted by name.
	Clusters []workv1alpha2.TargetCluster
	// AffinityName is the clusterAffinities term used, empty without
	// terms.
	AffinityName string
}

// ReasonClusterDeleting is the diagnosis of a cluster being deleted.
const ReasonClusterDeleting = "is being deleted"

// term is one cluster affinity to try: the primary affinity and, for
// capacity-aware strategies, its overflow affinities.
type term struct {
	name  string
	tiers []*affinity.Matcher
}

// Schedule decides where the binding goes. Failures are a
// *framework.FitError when no cluster passes the filters, a
// *framework.UnschedulableError when the passing clusters cannot take the
// replicas, and any other error is internal.
func (a *Algorithm) Schedule(ctx context.Context, snap *cache.Snapshot, in Input) (Decision, error) {
	b := framework.NewBindingInfo(in.Spec)
	b.Namespace, b.Name = in.Namespace, in.Name
	strategy := StrategyOf(b.Placement)
	terms, err := buildTerms(b.Placement, strategy.capacityAware() && len(in.Spec.Components) == 0)
	if err != nil {
		return Decision{}, err
	}
	start := 0
	if !in.Fresh && in.ObservedAffinityName != "" {
		for i, t := range terms {
			if t.name == in.ObservedAffinityName {
				start = i
				break
			}
		}
	}
	// Once per cycle: what does not depend on the affinity term.
	if r := a.framework.RunPreFilterPlugins(ctx, b); !r.IsSuccess() {
		return Decision{}, r.AsError()
	}
	var firstErr error
	for _, t := range terms[start:] {
		b.Tiers = t.tiers
		clusters, err := a.scheduleTerm(ctx, snap, b, strategy, in)
		if err == nil {
			return Decision{Clusters: clusters, AffinityName: t.name}, nil
		}
		if !IsUnschedulable(err) {
			return Decision{}, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return Decision{}, firstErr
}

// IsUnschedulable reports whether err is a scheduling failure (no fit or not
// enough room) rather than an internal error.
func IsUnschedulable(err error) bool {
	var fit *framework.FitError
	var unsched *framework.UnschedulableError
	return errors.As(err, &fit) || errors.As(err, &unsched)
}

func buildTerms(p *policyv1alpha1.Placement, overflow bool) ([]term, error) {
	if len(p.ClusterAffinities) == 0 {
		m, err := affinity.Compile(p.ClusterAffinity)
		if err != nil {
			return nil, err
		}
		return []term{{tiers: []*affinity.Matcher{m}}}, nil
	}
	terms := make([]term, len(p.ClusterAffinities))
	for i := range p.ClusterAffinities {
		at := &p.ClusterAffinities[i]
		m, err := affinity.Compile(&at.ClusterAffinity)
		if err != nil {
			return nil, fmt.Errorf("cluster affinity term %s: %w", at.AffinityName, err)
		}
		terms[i] = term{name: at.AffinityName, tiers: []*affinity.Matcher{m}}
		if !overflow {
			continue
		}
		for j := range at.OverflowAffinities {
			o := &at.OverflowAffinities[j]
			om, err := affinity.Compile(&o.ClusterAffinity)
			if err != nil {
				return nil, fmt.Errorf("overflow affinity %s of term %s: %w", o.AffinityName, at.AffinityName, err)
			}
			terms[i].tiers = append(terms[i].tiers, om)
		}
	}
	return terms, nil
}

func (a *Algorithm) scheduleTerm(ctx context.Context, snap *cache.Snapshot, b *framework.BindingInfo, strategy Strategy, in Input) ([]workv1alpha2.TargetCluster, error) {
	spec := in.Spec
	all := snap.Clusters()
	feasible := make([]*cache.ClusterInfo, 0, len(all))
	var diag framework.Diagnosis
	for _, c := range all {
		if c.Cluster.DeletionTimestamp != nil {
			// As in Karmada: what a deleting cluster holds is about to be
			// cleaned up, so nothing is placed there, not even what is
			// there already.
			diag.Add(c.Name(), ReasonClusterDeleting)
			continue
		}
		if r := a.framework.RunFilterPlugins(ctx, b, c); !r.IsSuccess() {
			if r.Code() == framework.Error {
				return nil, r.AsError()
			}
			diag.Add(c.Name(), r.Reason())
			continue
		}
		feasible = append(feasible, c)
	}
	if len(feasible) == 0 {
		return nil, &framework.FitError{NumAllClusters: len(all), Diagnosis: diag}
	}
	scores := make([]int64, len(feasible))
	if err := a.framework.RunScorePlugins(ctx, b, feasible, scores); err != nil {
		return nil, err
	}

	components := len(spec.Components) > 0
	cands := make([]Candidate, len(feasible))
	for i, c := range feasible {
		cur, isCur := b.Current(c.Name())
		if components {
			// Sets, not replicas, are what component capacity counts.
			cur = 0
		}
		tier := 0
		if len(b.Tiers) > 1 {
			// With a single tier every cluster that passed matched it.
			tier = b.Tier(c.Cluster)
		}
		cands[i] = Candidate{Cluster: c, Name: c.Name(), Score: scores[i], Tier: tier, Current: cur, IsCurrent: isCur}
	}

	needCapacity := strategy.capacityAware() && (spec.Replicas > 0 || components)
	if needCapacity {
		req := estimator.ForReplica(spec.ReplicaRequirements)
		fallback := spec.Replicas
		if components {
			req, fallback = estimator.ForComponentSet(spec.Components), 1
			req.Namespace = spec.Resource.Namespace
		}
		if err := a.estimate(ctx, cands, req, fallback); err != nil {
			return nil, err
		}
	}
	if strategy == StaticWeighted {
		if err := staticWeights(b.Placement, cands); err != nil {
			return nil, err
		}
	}

	// Static weights say exactly where replicas go, so spread constraints
	// do not apply to them (as in Karmada).
	spread := strategy != StaticWeighted && len(b.Placement.SpreadConstraints) > 0
	selected := cands
	if spread {
		sortByPreference(cands, needCapacity)
		need := int64(-1)
		if needCapacity && !components {
			need = int64(spec.Replicas)
		}
		var err error
		if selected, err = Select(cands, b.Placement.SpreadConstraints, need); err != nil {
			return nil, explain(err, len(feasible), len(all), diag)
		}
	}

	var targets []workv1alpha2.TargetCluster
	var err error
	if components {
		targets, err = AssignComponents(strategy, selected, spec, in.Fresh)
	} else {
		targets, err = Assign(strategy, selected, spec.Replicas, in.Fresh)
	}
	if err != nil {
		return nil, explain(err, len(feasible), len(all), diag)
	}
	return targets, nil
}

// sortByPreference orders candidates for selection: primary tier first,
// then by score, by room when it matters, and by name for determinism.
// Assignment does not depend on the order. The candidates arrive in name
// order (the snapshot's), so position stands in for the name, and sorting
// small keys then permuting once beats swapping whole candidates.
func sortByPreference(cands []Candidate, byRoom bool) {
	type key struct {
		tier  int
		score int64
		room  int64
		pos   int
	}
	keys := make([]key, len(cands))
	for i := range cands {
		keys[i] = key{tier: cands[i].Tier, score: cands[i].Score, pos: i}
		if byRoom {
			keys[i].room = cands[i].capacity()
		}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if x.tier != y.tier {
			return cmp.Compare(x.tier, y.tier)
		}
		if x.score != y.score {
			return cmp.Compare(y.score, x.score)
		}
		if x.room != y.room {
			return cmp.Compare(y.room, x.room)
		}
		return cmp.Compare(x.pos, y.pos)
	})
	sorted := make([]Candidate, len(cands))
	for i, k := range keys {
		sorted[i] = cands[k.pos]
	}
	copy(cands, sorted)
}

// explain puts a selection or assignment failure in context: how many
// clusters passed the filters and why the others did not.
func explain(err error, feasible, all int, diag framework.Diagnosis) error {
	var u *framework.UnschedulableError
	if !errors.As(err, &u) {
		return err
	}
	msg := fmt.Sprintf("%d/%d clusters passed the filters", feasible, all)
	if s := diag.Summary(); s != "" {
		msg += " (" + s + ")"
	}
	return &framework.UnschedulableError{Message: msg + ", but " + u.Message + "."}
}

// estimate fills Avail with the smallest answer of all estimators;
// clusters no estimator knows about are taken to hold fallback.
func (a *Algorithm) estimate(ctx context.Context, cands []Candidate, req *estimator.Requirements, fallback int32) error {
	targets := make([]*estimator.Target, len(cands))
	for i := range cands {
		targets[i] = cands[i].Cluster.Target
		cands[i].Avail = math.MaxInt32
	}
	out := make([]int32, len(cands))
	for _, e := range a.estimators {
		if err := e.MaxAvailableReplicas(ctx, targets, req, out); err != nil {
			return fmt.Errorf("estimating available replicas: %w", err)
		}
		for i, v := range out {
			if v != estimator.Unknown && int64(v) < cands[i].Avail {
				cands[i].Avail = int64(v)
			}
		}
	}
	for i := range cands {
		if cands[i].Avail == math.MaxInt32 {
			cands[i].Avail = int64(fallback)
		}
	}
	return nil
}

// staticWeights gives each candidate the highest weight of the rules
// matching it. Without a list every cluster weighs 1; when no candidate
// matches any rule, all weigh 1 too, as Karmada does, rather than placing
// nothing.
func staticWeights(p *policyv1alpha1.Placement, cands []Candidate) error {
	var list []policyv1alpha1.StaticClusterWeight
	if rs := p.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		list = rs.WeightPreference.StaticWeightList
	}
	weighted := false
	if len(list) > 0 {
		matchers := make([]*affinity.Matcher, len(list))
		for i := range list {
			m, err := affinity.Compile(&list[i].TargetCluster)
			if err != nil {
				return fmt.Errorf("static weight list entry %d: %w", i, err)
			}
			if m == nil {
				m = &affinity.Matcher{}
			}
			matchers[i] = m
		}
		for i := range cands {
			var w int64
			for j, m := range matchers {
				if list[j].Weight > w && m.Matches(cands[i].Cluster.Cluster) {
					w = list[j].Weight
				}
			}
			cands[i].Weight = w
			weighted = weighted || w > 0
		}
	}
	if !weighted {
		for i := range cands {
			cands[i].Weight = 1
		}
	}
	return nil
}
