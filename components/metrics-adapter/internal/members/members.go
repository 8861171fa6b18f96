// Package members lists the member clusters the metrics adapter asks: the
// Ready Push-mode Clusters of the control plane, with clients built from
// each Cluster's secretRef.
package members

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// Lister returns the members to ask, by name.
type Lister interface {
	Ready(ctx context.Context) ([]*membercluster.Clients, error)
}

// Clusters is a Lister over the control plane's Clusters.
type Clusters struct {
	reader  client.Reader
	clients *membercluster.ClientCache
}

// NewClusters reads Clusters (and their Secrets, through clients) with
// reader.
func NewClusters(reader client.Reader, clients *membercluster.ClientCache) *Clusters {
	return &Clusters{reader: reader, clients: clients}
}

// Ready returns the clients of every Cluster whose Ready condition is True,
// sorted by name. A Pull-mode Cluster is left out: the control plane never
// dials those. A Cluster whose clients cannot be built (no Secret, say) is
// logged and left out, so that one broken member does not hide the others.
func (c *Clusters) Ready(ctx context.Context) ([]*membercluster.Clients, error) {
	var list clusterv1alpha1.ClusterList
	if err := c.reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	var out []*membercluster.Clients
	for i := range list.Items {
		cluster := &list.Items[i]
		if !IsReady(cluster) || membercluster.SyncModeOf(cluster) == clusterv1alpha1.Pull {
			continue
		}
		clients, err := c.clients.ForCluster(ctx, cluster)
		if err != nil {
			if !errors.Is(err, membercluster.ErrPullMode) {
				log.FromContext(ctx).Error(err, "Leaving a member out of metrics", "cluster", cluster.Name)
			}
			continue
		}
		out = append(out, clients)
	}
	slices.SortFunc(out, func(a, b *membercluster.Clients) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return out, nil
}

// IsReady reports whether the Cluster's Ready condition is True.
func IsReady(cluster *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
