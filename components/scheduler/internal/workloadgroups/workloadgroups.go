// Package workloadgroups finds, for the WorkloadAffinity and
// WorkloadAntiAffinity plugins, the bindings of a workload group: through
// an index by group on the ResourceBinding informer, corrected by the
// decisions this scheduler has written and the informer has not delivered
// yet (Karmada's "assigning bindings"). It also serializes the scheduling
// cycles of bindings that share a group, so that two workers never decide
// for one group at once, each blind to the other's choice.
package workloadgroups

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
)

// Index names on ResourceBindings: the group's name. The informer cache
// scopes them by namespace, which is all a lookup needs: groups never span
// namespaces.
const (
	IndexAffinityGroup     = "spec.workloadAffinityGroups.affinityGroup"
	IndexAntiAffinityGroup = "spec.workloadAffinityGroups.antiAffinityGroup"
)

// Index registers both group indexes on ResourceBindings.
func Index(ctx context.Context, indexer client.FieldIndexer) error {
	for kind, name := range map[framework.GroupKind]string{framework.AffinityGroup: IndexAffinityGroup, framework.AntiAffinityGroup: IndexAntiAffinityGroup} {
		extract := func(obj client.Object) []string {
			rb, ok := obj.(*workv1alpha2.ResourceBinding)
			if !ok {
				return nil
			}
			if g := GroupOf(rb.Spec.WorkloadAffinityGroups, kind); g != "" {
				return []string{g}
			}
			return nil
		}
		if err := indexer.IndexField(ctx, &workv1alpha2.ResourceBinding{}, name, extract); err != nil {
			return fmt.Errorf("indexing ResourceBindings by workload %s group: %w", kind, err)
		}
	}
	return nil
}

// GroupOf returns the binding's group of the kind, empty when none.
func GroupOf(g *workv1alpha2.WorkloadAffinityGroups, kind framework.GroupKind) string {
	switch {
	case g == nil:
		return ""
	case kind == framework.AntiAffinityGroup:
		return g.AntiAffinityGroup
	default:
		return g.AffinityGroup
	}
}

// written is a spec.clusters this scheduler wrote, at the resourceVersion
// the write returned.
type written struct {
	resourceVersion string
	groups          workv1alpha2.WorkloadAffinityGroups
	clusters        []string
}

// Tracker implements framework.WorkloadGroups. Safe for concurrent use.
type Tracker struct {
	reader client.Reader

	mu      sync.Mutex
	written map[types.NamespacedName]written

	locksMu sync.Mutex
	locks   map[string]*groupLock
}

type groupLock struct {
	mu   sync.Mutex
	refs int
}

var _ framework.WorkloadGroups = &Tracker{}

// New returns a tracker listing ResourceBindings through reader, which
// must be the informer cache with the indexes of Index.
func New(reader client.Reader) *Tracker {
	return &Tracker{reader: reader, written: map[types.NamespacedName]written{}, locks: map[string]*groupLock{}}
}

// Members implements framework.WorkloadGroups: the informer's bindings of
// the group, each with the newer of the informer's spec.clusters and the
// one this scheduler last wrote.
func (t *Tracker) Members(ctx context.Context, kind framework.GroupKind, namespace, group string) ([]framework.GroupMember, error) {
	index := IndexAffinityGroup
	if kind == framework.AntiAffinityGroup {
		index = IndexAntiAffinityGroup
	}
	var list workv1alpha2.ResourceBindingList
	if err := t.reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{index: group}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ResourceBindings of workload %s group %q: %w", kind, group, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	members := make([]framework.GroupMember, 0, len(list.Items))
	for i := range list.Items {
		rb := &list.Items[i]
		m := framework.GroupMember{Name: rb.Name, Clusters: targetNames(rb.Spec.Clusters)}
		if w, ok := t.written[types.NamespacedName{Namespace: rb.Namespace, Name: rb.Name}]; ok {
			newer, err := resourceversion.CompareResourceVersion(w.resourceVersion, rb.ResourceVersion)
			if err != nil {
				return nil, fmt.Errorf("comparing versions of ResourceBinding %s/%s: %w", rb.Namespace, rb.Name, err)
			}
			if newer > 0 {
				if GroupOf(&w.groups, kind) != group {
					// Our write moved it to another group since.
					continue
				}
				m.Clusters = w.clusters
			}
		}
		members = append(members, m)
	}
	return members, nil
}

// Written records a spec.clusters this scheduler wrote to a
// ResourceBinding, at the resourceVersion the write returned, until the
// informer delivers that version or a later one.
func (t *Tracker) Written(rb *workv1alpha2.ResourceBinding, resourceVersion string, clusters []workv1alpha2.TargetCluster) {
	if rb.Spec.WorkloadAffinityGroups == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written[types.NamespacedName{Namespace: rb.Namespace, Name: rb.Name}] = written{
		resourceVersion: resourceVersion,
		groups:          *rb.Spec.WorkloadAffinityGroups,
		clusters:        targetNames(clusters),
	}
}

// Observe is called with every version of a ResourceBinding the informer
// delivers: a write it has caught up with is forgotten, which keeps the
// record as small as the writes in flight.
func (t *Tracker) Observe(rb *workv1alpha2.ResourceBinding) {
	key := types.NamespacedName{Namespace: rb.Namespace, Name: rb.Name}
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.written[key]
	if !ok {
		return
	}
	if cmp, err := resourceversion.CompareResourceVersion(rb.ResourceVersion, w.resourceVersion); err != nil || cmp >= 0 {
		delete(t.written, key)
	}
}

// Forget drops what is recorded of a deleted binding.
func (t *Tracker) Forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.written, types.NamespacedName{Namespace: namespace, Name: name})
}

// Pending is the number of writes the informer has not delivered yet; for
// tests.
func (t *Tracker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.written)
}

// Lock serializes the scheduling cycles of the bindings that share a group
// with one in namespace with groups g: from reading the group's members to
// recording the written decision, one binding of a group at a time, so
// that the next one sees the decision. Bindings without groups, and
// ClusterResourceBindings, lock nothing. unlock must be called once.
func (t *Tracker) Lock(namespace string, g *workv1alpha2.WorkloadAffinityGroups) (unlock func()) {
	if namespace == "" || g == nil {
		return func() {}
	}
	var keys []string
	if g.AffinityGroup != "" {
		keys = append(keys, "affinity/"+namespace+"/"+g.AffinityGroup)
	}
	if g.AntiAffinityGroup != "" {
		keys = append(keys, "anti-affinity/"+namespace+"/"+g.AntiAffinityGroup)
	}
	// One order for everyone: two bindings with both kinds of group never
	// wait for each other crosswise.
	slices.Sort(keys)
	held := make([]*groupLock, len(keys))
	for i, k := range keys {
		t.locksMu.Lock()
		l, ok := t.locks[k]
		if !ok {
			l = &groupLock{}
			t.locks[k] = l
		}
		l.refs++
		t.locksMu.Unlock()
		l.mu.Lock()
		held[i] = l
	}
	return func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].mu.Unlock()
			t.locksMu.Lock()
			if held[i].refs--; held[i].refs == 0 {
				delete(t.locks, keys[i])
			}
			t.locksMu.Unlock()
		}
	}
}

func targetNames(t []workv1alpha2.TargetCluster) []string {
	if len(t) == 0 {
		return nil
	}
	names := make([]string, len(t))
	for i, tc := range t {
		names[i] = tc.Name
	}
	return names
}
