package estimate

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// matcher decides which nodes a replica's pod may be scheduled to, as
// kube-scheduler's NodeUnschedulable, TaintToleration and NodeAffinity
// filters do.
type matcher struct {
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	// unschedulableTolerated: the pod tolerates the taint that stands for
	// spec.unschedulable, so cordoned nodes still count.
	unschedulableTolerated bool
}

// unschedulableTaint is how kube-scheduler sees a cordoned node.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// A toleration that cannot be parsed (a comparison operator on a value that
// is not a number) tolerates nothing; that is not worth a log line per node.
var noLog = logr.Discard()

func newMatcher(claim *estimatorrpc.NodeClaim, path *field.Path) (*matcher, error) {
	m := &matcher{}
	if claim == nil {
		m.affinity = nodeaffinity.NewRequiredNodeAffinity(nil, nil)
		return m, nil
	}
	var affinity *corev1.Affinity
	if claim.NodeAffinity != nil {
		// Parsed once here so that a bad selector is the caller's error,
		// not a silent mismatch on every node.
		if _, err := nodeaffinity.NewNodeSelector(claim.NodeAffinity, field.WithPath(path.Child("nodeAffinity"))); err != nil {
			return nil, err
		}
		affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: claim.NodeAffinity}}
	}
	m.affinity = nodeaffinity.NewRequiredNodeAffinity(claim.NodeSelector, affinity)
	m.tolerations = claim.Tolerations
	m.unschedulableTolerated = v1helper.TolerationsTolerateTaint(noLog, claim.Tolerations, &unschedulableTaint, true)
	return m, nil
}

func scheduleBlocking(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// matches reports whether a pod with the claim may go to node.
func (m *matcher) matches(node *corev1.Node) bool {
	if node.Spec.Unschedulable && !m.unschedulableTolerated {
		return false
	}
	// FindMatchingUntoleratedTaint would copy the filtered taints of every
	// node on every answer; the same check, taint by taint, does not.
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if scheduleBlocking(t) && !v1helper.TolerationsTolerateTaint(noLog, m.tolerations, t, true) {
			return false
		}
	}
	ok, err := m.affinity.Match(node)
	return ok && err == nil
}

// dims are the resources one answer is about, each given a column: the pod
// count first, then every resource some demand of the answer names. Free
// amounts and demands are vectors over them.
type dims struct {
	names []corev1.ResourceName
	index map[corev1.ResourceName]int
}

func newDims() *dims {
	return &dims{names: []corev1.ResourceName{corev1.ResourcePods}, index: map[corev1.ResourceName]int{corev1.ResourcePods: 0}}
}

func (d *dims) column(name corev1.ResourceName) int {
	if i, ok := d.index[name]; ok {
		return i
	}
	d.index[name] = len(d.names)
	d.names = append(d.names, name)
	return len(d.names) - 1
}

// demand is what one replica takes from a node, and where it may go.
type demand struct {
	match *matcher
	// allowed is, by node index, whether match allows the node, when the
	// answer's MatchCache had it or made it; nil: ask match.
	allowed []bool
	// amounts is over the dims of the answer, in the unit of Resources;
	// amounts[0], the pod count, is 1.
	amounts []int64
	// requests and priorityClass are what quotas look at.
	requests      corev1.ResourceList
	priorityClass string
}

// newDemand validates and compiles one replica's requirements. It must be
// called for every demand of an answer before any vector is sized: each may
// add columns.
func newDemand(c *Cluster, d *dims, claim *estimatorrpc.NodeClaim, requests corev1.ResourceList, priorityClass string, path *field.Path) (*demand, error) {
	m, err := newMatcher(claim, path.Child("nodeClaim"))
	if err != nil {
		return nil, err
	}
	dm := &demand{match: m, requests: requests, priorityClass: priorityClass}
	amounts := map[int]int64{0: 1}
	for name, q := range requests {
		if q.Sign() < 0 {
			return nil, field.Invalid(path.Child("resourceRequest").Key(string(name)), q.String(), "must not be negative")
		}
		// A replica is one pod whatever its request says about pods.
		if name == corev1.ResourcePods || q.IsZero() {
			continue
		}
		amounts[d.column(name)] = amount(name, requests)
	}
	dm.amounts = make([]int64, 0, len(d.names))
	for i := range d.names {
		dm.amounts = append(dm.amounts, amounts[i])
	}
	dm.allowed = c.allowedBy(claim, m)
	return dm, nil
}

// allows reports whether a replica may go to nodes[i], n.
func (dm *demand) allows(i int, n *Node) bool {
	if dm.allowed != nil {
		return dm.allowed[i]
	}
	return dm.match.matches(n.Node)
}

// widen pads the amounts to the final width of d (columns added by the
// demands compiled after this one).
func (dm *demand) widen(d *dims) {
	for len(dm.amounts) < len(d.names) {
		dm.amounts = append(dm.amounts, 0)
	}
}

// fits returns how many replicas fit in free, a vector over the dims.
func (dm *demand) fits(free []int64) int64 {
	n := int64(-1)
	for i, a := range dm.amounts {
		if a <= 0 {
			continue
		}
		f := free[i] / a
		if free[i] <= 0 {
			f = 0
		}
		if n < 0 || f < n {
			n = f
		}
	}
	return n
}

// fitsOne reports whether one replica fits in free.
func (dm *demand) fitsOne(free []int64) bool {
	for i, a := range dm.amounts {
		if a > 0 && free[i] < a {
			return false
		}
	}
	return true
}

func (dm *demand) take(free []int64) {
	for i, a := range dm.amounts {
		free[i] -= a
	}
}

// freeOf fills out with what is left on n over d.
func freeOf(n *Node, d *dims, out []int64) []int64 {
	out = out[:0]
	for _, name := range d.names {
		out = append(out, n.free(name))
	}
	return out
}
