package overrides

import (
	"cmp"
	"slices"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// appendMatching appends, in application order, the rules of policies that
// select obj and target cluster. Policies go by ascending precision (the
// most precise is applied last and so wins), then by name; rules keep their
// order within a policy.
func appendMatching(out []*rule, policies []*policy, obj *resource, cluster *clusterv1alpha1.Cluster) []*rule {
	type candidate struct {
		p    *policy
		prec precision
	}
	// Policy lists are short; a buffer on the stack spares an allocation
	// per render.
	var buf [16]candidate
	cands := buf[:0]
	for _, p := range policies {
		if p.ref.Kind == KindOverridePolicy && p.ref.Namespace != obj.namespace {
			continue
		}
		if prec, ok := selectPrecision(obj, p.selectors); ok {
			cands = append(cands, candidate{p: p, prec: prec})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.prec, b.prec), cmp.Compare(a.p.ref.Name, b.p.ref.Name))
	})
	for _, c := range cands {
		for _, r := range c.p.rules {
			if clusterMatches(r.target, cluster) {
				out = append(out, r)
			}
		}
	}
	return out
}
