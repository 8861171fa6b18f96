// Package cache keeps what the estimator's answers read about a member's
// nodes: each node's allocatable resources and the summed requests of the
// non-terminal pods bound to it. Informer events update the sums pod by pod,
// so an answer walks the nodes once and never the pods.
package cache

import (
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/estimate"
	"github.com/flotilla-io/flotilla/internal/podrequests"
)

// Cache is the member's nodes with their requested resources. It is safe
// for concurrent use: events write, answers read.
type Cache struct {
	mu sync.RWMutex
	// byName holds the nodes known from the informer and those that only
	// have pods bound to them so far (pod events may come first).
	byName map[string]*entry
	// sorted are the known nodes by name: the order first-fit walks.
	sorted []*estimate.Node
	pods   map[types.UID]podRecord
	// version moves when what node claims match changes: a node known or
	// forgotten, its labels, taints or cordon (estimate.Cluster.Version).
	version uint64
}

type entry struct {
	node  estimate.Node
	known bool
}

// podRecord is what a counted pod added to its node, to take back when it
// moves, changes or goes.
type podRecord struct {
	node     string
	requests estimate.Resources
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{byName: map[string]*entry{}, pods: map[types.UID]podRecord{}}
}

// Read calls fn with the known nodes, sorted by name, and their version,
// under the read lock: pod and node events wait until fn returns, so one
// answer sees one state without copying thousands of nodes per answer. fn
// must not keep the slice or the nodes.
func (c *Cache) Read(fn func(nodes []*estimate.Node, version uint64)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	fn(c.sorted, c.version)
}

// Len returns how many nodes are known and how many pods are counted.
func (c *Cache) Len() (nodes, pods int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.sorted), len(c.pods)
}

// SetNode adds or updates a node.
func (c *Cache) SetNode(n *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byName[n.Name]
	if e == nil {
		e = &entry{}
		c.byName[n.Name] = e
	}
	if !e.known || !sameClaimView(e.node.Node, n) {
		c.version++
	}
	e.node.Node = n
	e.node.Allocatable = estimate.FromList(n.Status.Allocatable)
	if !e.known {
		e.known = true
		i, _ := slices.BinarySearchFunc(c.sorted, n.Name, byNodeName)
		c.sorted = slices.Insert(c.sorted, i, &e.node)
	}
}

// sameClaimView reports whether node claims see a and b alike: same labels,
// taints and cordon. Status updates (allocatable, heartbeats) keep it.
func sameClaimView(a, b *corev1.Node) bool {
	return a != nil && maps.Equal(a.Labels, b.Labels) && a.Spec.Unschedulable == b.Spec.Unschedulable &&
		slices.EqualFunc(a.Spec.Taints, b.Spec.Taints, func(x, y corev1.Taint) bool {
			return x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect
		})
}

// DeleteNode forgets a node. The requests of pods still bound to it are
// kept, for when they go (or the node comes back).
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byName[name]
	if e == nil || !e.known {
		return
	}
	if i, found := slices.BinarySearchFunc(c.sorted, name, byNodeName); found {
		c.sorted = slices.Delete(c.sorted, i, i+1)
	}
	c.version++
	e.known = false
	e.node.Node = nil
	e.node.Allocatable = estimate.Resources{}
	c.dropIfEmpty(name, e)
}

func byNodeName(n *estimate.Node, name string) int { return strings.Compare(n.Node.Name, name) }

// SetPod counts a pod on its node, or stops counting it once it is no longer
// bound or has ended.
func (c *Cache) SetPod(p *corev1.Pod) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		c.DeletePod(p.UID)
		return
	}
	rec := podRecord{node: p.Spec.NodeName, requests: estimate.FromList(podrequests.ForPod(&p.Spec))}
	rec.requests.Pods = 1
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.pods[p.UID]; ok {
		if old.node == rec.node && old.requests.Equal(rec.requests) {
			return
		}
		c.uncount(old)
	}
	c.pods[p.UID] = rec
	e := c.byName[rec.node]
	if e == nil {
		e = &entry{}
		c.byName[rec.node] = e
	}
	e.node.Requested.Add(rec.requests)
}

// DeletePod stops counting a pod.
func (c *Cache) DeletePod(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.pods[uid]; ok {
		c.uncount(old)
		delete(c.pods, uid)
	}
}

func (c *Cache) uncount(rec podRecord) {
	e := c.byName[rec.node]
	if e == nil {
		return
	}
	e.node.Requested.Sub(rec.requests)
	c.dropIfEmpty(rec.node, e)
}

func (c *Cache) dropIfEmpty(name string, e *entry) {
	if !e.known && e.node.Requested.IsZero() {
		delete(c.byName, name)
	}
}

// NodeHandler feeds the cache from a Node informer.
func (c *Cache) NodeHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onNode(obj, false) },
		UpdateFunc: func(_, obj any) { c.onNode(obj, false) },
		DeleteFunc: func(obj any) { c.onNode(obj, true) },
	}
}

func (c *Cache) onNode(obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	if deleted {
		c.DeleteNode(n.Name)
		return
	}
	c.SetNode(n)
}

// PodHandler feeds the cache from a Pod informer.
func (c *Cache) PodHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { c.onPod(obj, false) },
		DeleteFunc: func(obj any) { c.onPod(obj, true) },
	}
}

func (c *Cache) onPod(obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if deleted {
		c.DeletePod(p.UID)
		return
	}
	c.SetPod(p)
}
