package detector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

// policy is a PropagationPolicy or a ClusterPropagationPolicy. Policies
// come from the cache and are shared: nothing here may modify them.
type policy struct {
	kind policymatch.PolicyKind
	obj  client.Object
	meta *metav1.ObjectMeta
	spec *policyv1alpha1.PropagationSpec
}

// policyFrom wraps a policy object, unwrapping the tombstones informers
// hand to delete handlers.
func policyFrom(obj any) (*policy, bool) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return &policy{kind: policymatch.PropagationPolicy, obj: p, meta: &p.ObjectMeta, spec: &p.Spec}, true
	case *policyv1alpha1.ClusterPropagationPolicy:
		return &policy{kind: policymatch.ClusterPropagationPolicy, obj: p, meta: &p.ObjectMeta, spec: &p.Spec}, true
	}
	return nil, false
}

// id is the policy's permanent id, empty until assigned.
func (p *policy) id() string { return p.meta.Labels[idLabel(p.kind)] }

// claim is the claim this policy puts on what it propagates.
func (p *policy) claim() claim {
	return claim{Kind: p.kind, ID: p.id(), Namespace: p.meta.Namespace, Name: p.meta.Name}
}

func (p *policy) lazy() bool {
	return p.spec.ActivationPreference == policyv1alpha1.LazyActivation
}

func (p *policy) deleting() bool { return p.meta.DeletionTimestamp != nil }

// candidate describes the policy to policymatch for a template it selects
// with the given implicit priority.
func (p *policy) candidate(implicit policymatch.ImplicitPriority) policymatch.Candidate {
	var explicit int32
	if p.spec.Priority != nil {
		explicit = *p.spec.Priority
	}
	return policymatch.Candidate{
		Kind:      p.kind,
		Namespace: p.meta.Namespace,
		Name:      p.meta.Name,
		Explicit:  explicit,
		Implicit:  implicit,
		Preempt:   p.spec.Preemption == policyv1alpha1.PreemptAlways,
	}
}

// String names the policy in logs and events.
func (p *policy) String() string {
	if p.kind == policymatch.ClusterPropagationPolicy {
		return "ClusterPropagationPolicy " + p.meta.Name
	}
	return "PropagationPolicy " + p.meta.Namespace + "/" + p.meta.Name
}
