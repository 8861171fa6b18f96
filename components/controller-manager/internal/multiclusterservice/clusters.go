package multiclusterservice

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// CrossCluster reports whether mcs exposes its Service across clusters.
func CrossCluster(mcs *networkingv1alpha1.MultiClusterService) bool {
	return slices.Contains(mcs.Spec.Types, networkingv1alpha1.ExposureTypeCrossCluster)
}

// Selected are the names of the clusters of selectors, or all of all when
// there are none, sorted.
func Selected(selectors []networkingv1alpha1.ClusterSelector, all []string) []string {
	if len(selectors) == 0 {
		return slices.Sorted(slices.Values(all))
	}
	out := make([]string, 0, len(selectors))
	for _, s := range selectors {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// clusterNames lists the federation's Clusters.
func clusterNames(ctx context.Context, c client.Reader) ([]string, error) {
	var list clusterv1alpha1.ClusterList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	out := make([]string, 0, len(list.Items))
	for _, cl := range list.Items {
		out = append(out, cl.Name)
	}
	return out, nil
}
