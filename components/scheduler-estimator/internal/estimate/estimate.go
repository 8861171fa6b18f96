package estimate

import (
	"context"
	"math"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// MaxReplicas answers MaxAvailableReplicas: the sum over the nodes the
// replica may go to of how many replicas each has room for, limited by the
// quotas of the request's namespace, once the request's assumed workloads
// have taken their share of both.
//
// c.Quotas are those of req.ReplicaRequirements.Namespace. parallelism is
// how many goroutines count the nodes.
func MaxReplicas(ctx context.Context, c Cluster, req *estimatorrpc.MaxAvailableReplicasRequest, parallelism int) (int32, error) {
	nodes := c.Nodes
	d := newDims()
	rr := &req.ReplicaRequirements
	want, err := newDemand(&c, d, rr.NodeClaim, rr.ResourceRequest, rr.PriorityClassName, field.NewPath("replicaRequirements"))
	if err != nil {
		return 0, err
	}
	assumed, err := compileAssumed(&c, d, req.AssumedWorkloads)
	if err != nil {
		return 0, err
	}
	want.widen(d)

	limit := quotaLimit(c.Quotas, []quotaShare{{demand: want, replicas: 1}}, assumedShares(assumed, rr.Namespace))
	if limit == 0 {
		return 0, nil
	}
	var total int64
	if len(assumed) == 0 {
		total = sumFits(ctx, nodes, d, want, parallelism)
	} else {
		t := newFreeTable(nodes, d)
		placeAssumed(nodes, t, assumed)
		for i, n := range nodes {
			if want.allows(i, n) {
				total += want.fits(t.row(i))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return clamp32(min(total, limit)), nil
}

// MaxSets answers MaxAvailableComponentSets: how many complete sets of the
// components (each component times its replicas) fit at once, limited by
// the quotas of the request's namespace, once the assumed workloads have
// taken their share.
//
// Summing per-node room component by component would count the same free
// CPU once for every component; sets are instead packed for real. The
// packing is a greedy first-fit simulation: set after set, each replica of
// each component goes to the first node, in the nodes' order, that its node
// claim allows and that still has room for it; the first replica that finds
// no node ends the count, and the sets completed before it are the answer.
// First-fit is not an optimal bin packing (none is known that runs in
// polynomial time), but it is what a scheduler filling nodes one after
// another achieves, and it never answers more than fits.
func MaxSets(ctx context.Context, c Cluster, req *estimatorrpc.MaxAvailableComponentSetsRequest) (int32, error) {
	nodes := c.Nodes
	root := field.NewPath("components")
	if len(req.Components) == 0 {
		return 0, field.Required(root, "at least one component")
	}
	d := newDims()
	var set []quotaShare
	for i, comp := range req.Components {
		path := root.Index(i)
		if comp.Replicas < 0 {
			return 0, field.Invalid(path.Child("replicas"), comp.Replicas, "must not be negative")
		}
		rr := &comp.ReplicaRequirements
		dm, err := newDemand(&c, d, rr.NodeClaim, rr.ResourceRequest, rr.PriorityClassName, path.Child("replicaRequirements"))
		if err != nil {
			return 0, err
		}
		if comp.Replicas > 0 {
			set = append(set, quotaShare{demand: dm, replicas: int64(comp.Replicas)})
		}
	}
	assumed, err := compileAssumed(&c, d, req.AssumedWorkloads)
	if err != nil {
		return 0, err
	}
	if len(set) == 0 {
		// Nothing to place: any number of empty sets fits.
		return math.MaxInt32, nil
	}
	for _, s := range set {
		s.demand.widen(d)
	}

	limit := min(quotaLimit(c.Quotas, set, assumedShares(assumed, req.Namespace)), math.MaxInt32)
	t := newFreeTable(nodes, d)
	placeAssumed(nodes, t, assumed)
	placers := make([]firstFit, len(set))
	for i := range set {
		placers[i].demand = set[i].demand
	}
	for sets := int64(0); sets < limit; sets++ {
		if sets%1024 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		for i := range set {
			for range set[i].replicas {
				if !placers[i].place(nodes, t) {
					return int32(sets), nil
				}
			}
		}
	}
	return int32(limit), nil
}

// assumedComponent is one component of an assumed workload: replicas the
// scheduler placed on the cluster whose pods are not bound yet.
type assumedComponent struct {
	namespace string
	demand    *demand
	replicas  int64
}

func compileAssumed(cl *Cluster, d *dims, workloads []estimatorrpc.AssumedWorkload) ([]assumedComponent, error) {
	var out []assumedComponent
	for i, w := range workloads {
		for j, c := range w.Components {
			path := field.NewPath("assumedWorkloads").Index(i).Child("components").Index(j)
			if c.Replicas < 0 {
				return nil, field.Invalid(path.Child("replicas"), c.Replicas, "must not be negative")
			}
			rr := &c.ReplicaRequirements
			dm, err := newDemand(cl, d, rr.NodeClaim, rr.ResourceRequest, rr.PriorityClassName, path.Child("replicaRequirements"))
			if err != nil {
				return nil, err
			}
			if c.Replicas > 0 {
				out = append(out, assumedComponent{namespace: w.Namespace, demand: dm, replicas: int64(c.Replicas)})
			}
		}
	}
	for _, a := range out {
		a.demand.widen(d)
	}
	return out, nil
}

// assumedShares are the assumed components that count against the quotas
// of namespace.
func assumedShares(assumed []assumedComponent, namespace string) []quotaShare {
	var out []quotaShare
	for _, a := range assumed {
		if a.namespace == namespace {
			out = append(out, quotaShare{demand: a.demand, replicas: a.replicas})
		}
	}
	return out
}

// placeAssumed takes the assumed replicas from the nodes, first-fit: where
// kube-scheduler will put them is not known, but each takes room on one
// node, not a share of every node. Replicas that fit nowhere take nothing:
// their pods would stay pending.
func placeAssumed(nodes []*Node, t *freeTable, assumed []assumedComponent) {
	for _, a := range assumed {
		f := firstFit{demand: a.demand}
		for range a.replicas {
			if !f.place(nodes, t) {
				break
			}
		}
	}
}

// sumFits counts, in parallel, the replicas of want each node has room for.
// Only the nodes are walked: their requested amounts are kept up to date by
// the cache as pods come and go.
func sumFits(ctx context.Context, nodes []*Node, d *dims, want *demand, parallelism int) int64 {
	const chunk = 128
	var total atomic.Int64
	pieces := (len(nodes) + chunk - 1) / chunk
	workqueue.ParallelizeUntil(ctx, max(parallelism, 1), pieces, func(p int) {
		free := make([]int64, 0, len(d.names))
		var sum int64
		for i := p * chunk; i < min((p+1)*chunk, len(nodes)); i++ {
			n := nodes[i]
			if !want.allows(i, n) {
				continue
			}
			free = freeOf(n, d, free)
			sum += want.fits(free)
		}
		total.Add(sum)
	})
	return total.Load()
}

// freeTable is what is left on every node over the dims of an answer, a row
// per node, for the answers that take from it as they go.
type freeTable struct {
	width int
	v     []int64
}

func newFreeTable(nodes []*Node, d *dims) *freeTable {
	t := &freeTable{width: len(d.names), v: make([]int64, len(nodes)*len(d.names))}
	for i, n := range nodes {
		row := t.row(i)
		for j, name := range d.names {
			row[j] = n.free(name)
		}
	}
	return t
}

func (t *freeTable) row(i int) []int64 { return t.v[i*t.width : (i+1)*t.width] }

// firstFit places replicas of one demand on the first node, in the nodes'
// order, that the demand may go to and that has room for it. Free amounts
// only shrink during an answer, so a node passed over never fits later: the
// placer remembers where it got to, and all the replicas of one demand walk
// the nodes once.
type firstFit struct {
	demand *demand
	next   int
	// matched: nodes[next] passed the node claim already.
	matched bool
}

func (f *firstFit) place(nodes []*Node, t *freeTable) bool {
	for ; f.next < len(nodes); f.next, f.matched = f.next+1, false {
		if !f.matched {
			if !f.demand.allows(f.next, nodes[f.next]) {
				continue
			}
			f.matched = true
		}
		if row := t.row(f.next); f.demand.fitsOne(row) {
			f.demand.take(row)
			return true
		}
	}
	return false
}

func clamp32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(max(v, 0))
}
