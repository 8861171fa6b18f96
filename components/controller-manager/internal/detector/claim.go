package detector

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector/policymatch"
)

// claim is the policy a template (and its binding) is claimed by, as the
// conventions' labels and annotations record it.
type claim struct {
	Kind policymatch.PolicyKind
	// ID is the policy's permanent id; empty when unclaimed.
	ID string
	// Namespace is empty for a ClusterPropagationPolicy.
	Namespace string
	Name      string
}

// Claim label and annotation keys by policy kind.
var (
	ppLabelKeys       = []string{policyv1alpha1.PropagationPolicyPermanentIDLabel}
	ppAnnotationKeys  = []string{policyv1alpha1.PropagationPolicyNamespaceAnnotation, policyv1alpha1.PropagationPolicyNameAnnotation}
	cppLabelKeys      = []string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel}
	cppAnnotationKeys = []string{policyv1alpha1.ClusterPropagationPolicyAnnotation}
)

// idLabel is the label holding the permanent id of a policy of kind k, on
// the policy itself and on what it claims.
func idLabel(k policymatch.PolicyKind) string {
	if k == policymatch.ClusterPropagationPolicy {
		return policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	}
	return policyv1alpha1.PropagationPolicyPermanentIDLabel
}

// claimOf reads the claim from labels and annotations. A PropagationPolicy's
// claim wins over a stale ClusterPropagationPolicy one.
func claimOf(labels, annotations map[string]string) claim {
	if id := labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		return claim{
			Kind:      policymatch.PropagationPolicy,
			ID:        id,
			Namespace: annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation],
			Name:      annotations[policyv1alpha1.PropagationPolicyNameAnnotation],
		}
	}
	if id := labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; id != "" {
		return claim{Kind: policymatch.ClusterPropagationPolicy, ID: id, Name: annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]}
	}
	return claim{}
}

// hasClaimMetadata reports whether any claim key is present, even partly.
func hasClaimMetadata(labels, annotations map[string]string) bool {
	for _, keys := range [][]string{ppLabelKeys, cppLabelKeys} {
		for _, k := range keys {
			if _, ok := labels[k]; ok {
				return true
			}
		}
	}
	for _, keys := range [][]string{ppAnnotationKeys, cppAnnotationKeys} {
		for _, k := range keys {
			if _, ok := annotations[k]; ok {
				return true
			}
		}
	}
	return false
}

// metaChange is what to set and remove in labels and annotations.
type metaChange struct {
	setLabels         map[string]string
	setAnnotations    map[string]string
	removeLabels      []string
	removeAnnotations []string
}

func (c metaChange) empty() bool {
	return len(c.setLabels) == 0 && len(c.setAnnotations) == 0 && len(c.removeLabels) == 0 && len(c.removeAnnotations) == 0
}

// claimChange computes how labels and annotations must change to say want,
// or to hold no claim when want.ID is empty. Keys of the other policy kind
// are removed, as when a PropagationPolicy preempts a
// ClusterPropagationPolicy.
func claimChange(labels, annotations map[string]string, want claim) metaChange {
	wantLabels, wantAnnotations := map[string]string{}, map[string]string{}
	if want.ID != "" {
		wantLabels[idLabel(want.Kind)] = want.ID
		if want.Kind == policymatch.ClusterPropagationPolicy {
			wantAnnotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = want.Name
		} else {
			wantAnnotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] = want.Namespace
			wantAnnotations[policyv1alpha1.PropagationPolicyNameAnnotation] = want.Name
		}
	}
	var c metaChange
	c.setLabels, c.removeLabels = diffKeys(labels, wantLabels, ppLabelKeys, cppLabelKeys)
	c.setAnnotations, c.removeAnnotations = diffKeys(annotations, wantAnnotations, ppAnnotationKeys, cppAnnotationKeys)
	return c
}

// diffKeys compares the claim keys of have with want: what to set and what
// to remove.
func diffKeys(have, want map[string]string, keySets ...[]string) (map[string]string, []string) {
	var set map[string]string
	var remove []string
	for _, keys := range keySets {
		for _, k := range keys {
			w, wanted := want[k]
			h, present := have[k]
			switch {
			case wanted && (!present || h != w):
				if set == nil {
					set = map[string]string{}
				}
				set[k] = w
			case !wanted && present:
				remove = append(remove, k)
			}
		}
	}
	return set, remove
}

// apply makes the change on labels and annotations, allocating the maps as
// needed, and returns them.
func (c metaChange) apply(labels, annotations map[string]string) (map[string]string, map[string]string) {
	labels = applyKeys(labels, c.setLabels, c.removeLabels)
	annotations = applyKeys(annotations, c.setAnnotations, c.removeAnnotations)
	return labels, annotations
}

func applyKeys(m, set map[string]string, remove []string) map[string]string {
	if len(set) > 0 && m == nil {
		m = make(map[string]string, len(set))
	}
	for k, v := range set {
		m[k] = v
	}
	for _, k := range remove {
		delete(m, k)
	}
	return m
}

// mergePatch is the JSON merge patch making the change on an object with
// uid. The uid makes the patch fail rather than claim a template deleted
// and recreated under the same name since it was read.
func (c metaChange) mergePatch(uid types.UID) ([]byte, error) {
	meta := map[string]any{"uid": uid}
	if m := patchKeys(c.setLabels, c.removeLabels); m != nil {
		meta["labels"] = m
	}
	if m := patchKeys(c.setAnnotations, c.removeAnnotations); m != nil {
		meta["annotations"] = m
	}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, fmt.Errorf("encoding claim patch: %w", err)
	}
	return data, nil
}

func patchKeys(set map[string]string, remove []string) map[string]any {
	if len(set) == 0 && len(remove) == 0 {
		return nil
	}
	m := make(map[string]any, len(set)+len(remove))
	for k, v := range set {
		m[k] = v
	}
	for _, k := range remove {
		m[k] = nil // null deletes the key in a merge patch
	}
	return m
}
