// Package propagationpolicy defaults and validates PropagationPolicies and
// ClusterPropagationPolicies (/mutate-propagationpolicy,
// /validate-propagationpolicy, /mutate-clusterpropagationpolicy,
// /validate-clusterpropagationpolicy).
package propagationpolicy

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// kind is what the handlers need to know of one of the two policy kinds.
type kind struct {
	gk         schema.GroupKind
	namespaced bool
	idLabel    string
	// newObj returns an empty policy and a pointer to its spec.
	newObj func() (client.Object, *policyv1alpha1.PropagationSpec)
}

var (
	propagationPolicy = kind{
		gk:         policyv1alpha1.GroupVersion.WithKind("PropagationPolicy").GroupKind(),
		namespaced: true,
		idLabel:    policyv1alpha1.PropagationPolicyPermanentIDLabel,
		newObj: func() (client.Object, *policyv1alpha1.PropagationSpec) {
			p := &policyv1alpha1.PropagationPolicy{}
			return p, &p.Spec
		},
	}
	clusterPropagationPolicy = kind{
		gk:      policyv1alpha1.GroupVersion.WithKind("ClusterPropagationPolicy").GroupKind(),
		idLabel: policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
		newObj: func() (client.Object, *policyv1alpha1.PropagationSpec) {
			p := &policyv1alpha1.ClusterPropagationPolicy{}
			return p, &p.Spec
		},
	}
)
