package estimate

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"

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

	// Matching allocates per node (the selectors read a field set built
	// for each): spread over the cores, each chunk writing its own bools.
	const chunk = 256
	allowed := make([]bool, len(c.Nodes))
	workqueue.ParallelizeUntil(context.Background(), runtime.GOMAXPROCS(0), (len(c.Nodes)+chunk-1)/chunk, func(p int) {
		for i := p * chunk; i < min((p+1)*chunk, len(c.Nodes)); i++ {
			allowed[i] = m.matches(c.Nodes[i].Node)
		}
	})

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
