package policymatch

// PolicyKind is PropagationPolicy or ClusterPropagationPolicy.
type PolicyKind int

// Policy kinds.
const (
	PropagationPolicy PolicyKind = iota
	ClusterPropagationPolicy
)

func (k PolicyKind) String() string {
	if k == ClusterPropagationPolicy {
		return "ClusterPropagationPolicy"
	}
	return "PropagationPolicy"
}

// Candidate is a policy that selects the template.
type Candidate struct {
	Kind PolicyKind
	// Namespace is empty for a ClusterPropagationPolicy.
	Namespace string
	Name      string
	// Explicit is spec.priority (0 when unset).
	Explicit int32
	// Implicit is how specifically the policy selects the template; never
	// NoMatch for a candidate.
	Implicit ImplicitPriority
	// Preempt is spec.preemption Always.
	Preempt bool
}

func (c Candidate) same(o Candidate) bool {
	return c.Kind == o.Kind && c.Namespace == o.Namespace && c.Name == o.Name
}

// Compare orders candidates best first: higher explicit priority, then
// higher implicit priority, then name (and namespace) alphabetically.
func Compare(a, b Candidate) int {
	switch {
	case a.Explicit != b.Explicit:
		if a.Explicit > b.Explicit {
			return -1
		}
		return 1
	case a.Implicit != b.Implicit:
		if a.Implicit > b.Implicit {
			return -1
		}
		return 1
	case a.Name != b.Name:
		if a.Name < b.Name {
			return -1
		}
		return 1
	case a.Namespace != b.Namespace:
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	return 0
}

// Best returns the best candidate satisfying keep (all when keep is nil).
func Best(cs []Candidate, keep func(Candidate) bool) (Candidate, bool) {
	var best Candidate
	found := false
	for _, c := range cs {
		if keep != nil && !keep(c) {
			continue
		}
		if !found || Compare(c, best) < 0 {
			best, found = c, true
		}
	}
	return best, found
}

// Decision is which policy propagates a template.
type Decision struct {
	// Policy claims the template; nil when no policy does, and a claim the
	// template has must be released.
	Policy *Candidate
	// Preempted is true when Policy takes the template over from the policy
	// that claimed it.
	Preempted bool
}

// Decide picks the policy of a template. claimed is the policy that claims
// the template now, when it still exists (with the permanent id of the
// claim) and still selects the template; nil otherwise. pps and cpps are
// the PropagationPolicies and ClusterPropagationPolicies selecting it
// (claimed among them).
//
// A claimed template stays with its policy unless a policy with preemption
// Always takes it over: a PropagationPolicy of strictly higher explicit
// priority from a PropagationPolicy; any PropagationPolicy from a
// ClusterPropagationPolicy; a ClusterPropagationPolicy of strictly higher
// explicit priority from a ClusterPropagationPolicy. A template without a
// valid claim goes to the best PropagationPolicy, else the best
// ClusterPropagationPolicy.
func Decide(claimed *Candidate, pps, cpps []Candidate) Decision {
	if claimed != nil {
		cur := *claimed
		outranks := func(c Candidate) bool {
			return c.Preempt && !c.same(cur) && c.Explicit > cur.Explicit
		}
		if cur.Kind == ClusterPropagationPolicy {
			if p, ok := Best(pps, func(c Candidate) bool { return c.Preempt }); ok {
				return Decision{Policy: &p, Preempted: true}
			}
			if c, ok := Best(cpps, outranks); ok {
				return Decision{Policy: &c, Preempted: true}
			}
		} else if p, ok := Best(pps, outranks); ok {
			return Decision{Policy: &p, Preempted: true}
		}
		return Decision{Policy: &cur}
	}
	if p, ok := Best(pps, nil); ok {
		return Decision{Policy: &p}
	}
	if c, ok := Best(cpps, nil); ok {
		return Decision{Policy: &c}
	}
	return Decision{}
}
