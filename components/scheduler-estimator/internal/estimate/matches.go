package estimate

import (
	"encoding/json"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// Cluster is what one answer reads.
type Cluster struct {
	// Nodes are in the order first-fit walks them (the cache keeps them by
	// name).
	Nodes []*Node
	// Version changes whenever a node comes or goes, or its labels, taints
	// or cordon change: what node claims are matched against. Nodes'
	// resources may change without it.
	Version uint64
	// Quotas are the ResourceQuotas of the request's namespace.
	Quotas []*corev1.ResourceQuota
	// Matches, when set, keeps which nodes each claim allows from one
	// answer to the next at the same Version.
	Matches *MatchCache
}

// maxCachedClaims bounds a MatchCache: schedulers ask about a handful of
// distinct claims (one per workload shape), each costing a bool per node.
const maxCachedClaims = 256

// MatchCache remembers, per node claim, which nodes the claim allows, for
// as long as the nodes' Version stays: matching node affinity and taints is
// most of an answer's work at thousands of nodes, and the scheduler asks the
// same claims again and again while only pods come and go. It is safe for
// concurrent use.
type MatchCache struct {
	mu      sync.Mutex
	version uint64
	allowed map[string][]bool
}

// NewMatchCache returns an empty MatchCache.
func NewMatchCache() *MatchCache {
	return &MatchCache{allowed: map[string][]bool{}}
}

// allowedBy returns, by node index, the nodes m allows among c's, from the
// cache when it holds them for c.Version, else by matching every node (and
// remembering it). Without a cache in c it returns nil: callers match node
// by node.
func (c *Cluster) allowedBy(claim *estimatorrpc.NodeClaim, m *matcher) []bool {
	if c.Matches == nil {
		return nil
	}
	key, err := json.Marshal(claim)
	if err != nil {
		return nil
	}
	mc := c.Matches
	mc.mu.Lock()
	if mc.version == c.Version {
		if allowed, ok := mc.allowed[string(key)]; ok && len(allowed) == len(c.Nodes) {
			mc.mu.Unlock()
			return allowed
		}
	}
	mc.mu.Unlock()

	allowed := make([]bool, len(c.Nodes))
	for i, n := range c.Nodes {
		allowed[i] = m.matches(n.Node)
	}

	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.version != c.Version || len(mc.allowed) >= maxCachedClaims {
		// Every entry is of an older version, or the cache is full: start
		// over rather than track ages.
		mc.version, mc.allowed = c.Version, map[string][]bool{}
	}
	mc.allowed[string(key)] = allowed
	return allowed
}
