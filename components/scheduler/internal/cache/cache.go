// Package cache keeps the scheduler's view of the member clusters, fed by
// the Cluster informer, and hands out immutable snapshots: one per
// scheduling cycle, so that a decision is a pure function of the binding and
// the snapshot, however the clusters change meanwhile.
package cache

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/internal/affinity"
)

// ClusterInfo is one cluster with what scheduling derives from it,
// computed once per Cluster update. It is never modified after creation, so
// snapshots share it freely.
type ClusterInfo struct {
	// Cluster is the informer's object; read only.
	Cluster *clusterv1alpha1.Cluster
	// Target is the cluster as estimators see it.
	Target *estimator.Target
	// Zones are the zones the cluster spans.
	Zones []string

	// name is Cluster.Name, kept close: it is read for every cluster of
	// every cycle.
	name           string
	apis           map[string]struct{}
	apisIncomplete bool
}

// NewClusterInfo derives the scheduling view of a Cluster.
func NewClusterInfo(c *clusterv1alpha1.Cluster) *ClusterInfo {
	info := &ClusterInfo{
		Cluster: c,
		Target:  estimator.NewTarget(c),
		Zones:   affinity.Zones(c),
		name:    c.Name,
		apis:    make(map[string]struct{}),
	}
	for _, gv := range c.Status.APIEnablements {
		for _, r := range gv.Resources {
			info.apis[APIKey(gv.GroupVersion, r.Kind)] = struct{}{}
		}
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
	info.apisIncomplete = cond != nil && cond.Status == metav1.ConditionFalse
	return info
}

// Name is the cluster's name.
func (c *ClusterInfo) Name() string { return c.name }

// APIKey identifies a kind within a group-version, as ServesAPI expects it.
func APIKey(groupVersion, kind string) string {
	var b strings.Builder
	b.Grow(len(groupVersion) + 1 + len(kind))
	b.WriteString(groupVersion)
	b.WriteByte('/')
	b.WriteString(kind)
	return b.String()
}

// ServesAPI reports whether status.apiEnablements lists the kind (key from
// APIKey).
func (c *ClusterInfo) ServesAPI(key string) bool {
	_, ok := c.apis[key]
	return ok
}

// APIEnablementsIncomplete reports whether the cluster said its
// apiEnablements list is partial (CompleteAPIEnablements False), in which
// case a missing API proves nothing.
func (c *ClusterInfo) APIEnablementsIncomplete() bool { return c.apisIncomplete }

// Snapshot is an immutable, name-sorted view of the clusters.
type Snapshot struct {
	clusters []*ClusterInfo
	byName   map[string]*ClusterInfo
}

// NewSnapshot builds a snapshot from clusters (any order). Tests and
// benchmarks use it directly; the scheduler gets snapshots from a Cache.
func NewSnapshot(clusters ...*ClusterInfo) *Snapshot {
	s := &Snapshot{clusters: slices.Clone(clusters), byName: make(map[string]*ClusterInfo, len(clusters))}
	slices.SortFunc(s.clusters, func(a, b *ClusterInfo) int { return strings.Compare(a.Name(), b.Name()) })
	for _, c := range s.clusters {
		s.byName[c.Name()] = c
	}
	return s
}

// Clusters are all clusters, sorted by name. Callers must not modify the
// slice.
func (s *Snapshot) Clusters() []*ClusterInfo { return s.clusters }

// Get returns the named cluster.
func (s *Snapshot) Get(name string) (*ClusterInfo, bool) {
	c, ok := s.byName[name]
	return c, ok
}

// Len is the number of clusters.
func (s *Snapshot) Len() int { return len(s.clusters) }

// Cache holds the latest ClusterInfo of every cluster. It is safe for
// concurrent use: informer handlers write, scheduling workers take
// snapshots.
type Cache struct {
	mu       sync.RWMutex
	clusters map[string]*ClusterInfo
	// snapshot is rebuilt lazily after a change; between changes every
	// cycle shares it.
	snapshot *Snapshot
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{clusters: make(map[string]*ClusterInfo)}
}

// AddOrUpdate records the latest state of a cluster.
func (c *Cache) AddOrUpdate(cluster *clusterv1alpha1.Cluster) {
	info := NewClusterInfo(cluster)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clusters[cluster.Name] = info
	c.snapshot = nil
}

// Delete forgets a cluster.
func (c *Cache) Delete(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.clusters[name]; ok {
		delete(c.clusters, name)
		c.snapshot = nil
	}
}

// Has reports whether the cluster exists.
func (c *Cache) Has(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.clusters[name]
	return ok
}

// Get returns the latest state of the named cluster.
func (c *Cache) Get(name string) (*ClusterInfo, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	info, ok := c.clusters[name]
	return info, ok
}

// Snapshot returns the current clusters as an immutable snapshot.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.RLock()
	s := c.snapshot
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snapshot == nil {
		infos := make([]*ClusterInfo, 0, len(c.clusters))
		for _, info := range c.clusters {
			infos = append(infos, info)
		}
		c.snapshot = NewSnapshot(infos...)
	}
	return c.snapshot
}
