package clusterstatus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// apiEnablements turns discovery's resource lists into status.apiEnablements,
// sorted by group-version and resource name so that an unchanged member
// gives an unchanged status. Subresources (pods/status, deployments/scale)
// are not resources one can place, so they are left out.
func apiEnablements(lists []*metav1.APIResourceList) []clusterv1alpha1.APIEnablement {
	out := make([]clusterv1alpha1.APIEnablement, 0, len(lists))
	for _, l := range lists {
		if l == nil {
			continue
		}
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		slices.SortFunc(e.Resources, func(a, b clusterv1alpha1.APIResource) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b clusterv1alpha1.APIEnablement) int { return cmp.Compare(a.GroupVersion, b.GroupVersion) })
	return out
}

// apiEnablementsCondition says whether apiEnablements is complete. partial is
// discovery's error for the group-versions it could not list, if any.
func apiEnablementsCondition(enablements []clusterv1alpha1.APIEnablement, partial error, generation int64) metav1.Condition {
	c := metav1.Condition{
		Type:               clusterv1alpha1.ClusterConditionCompleteAPIEnablements,
		ObservedGeneration: generation,
	}
	switch {
	case len(enablements) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, clusterv1alpha1.APIEnablementsReasonEmpty, "collected empty APIEnablements from the cluster"
		if partial != nil {
			c.Message += ": " + partial.Error()
		}
	case partial != nil:
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1alpha1.APIEnablementsReasonPartial
		c.Message = fmt.Sprintf("collected partial APIEnablements (%d group-versions) from the cluster: %v", len(enablements), partial)
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, clusterv1alpha1.APIEnablementsReasonComplete, "collected complete APIEnablements from the cluster"
	}
	return c
}
