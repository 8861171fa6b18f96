package membercluster

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// ErrInformerManagerStopped is returned once the manager has shut down.
var ErrInformerManagerStopped = errors.New("member informer manager is stopped")

// NewInformerFunc builds (without starting) an informer in a member. It is
// called once per member and key, and again after the member's clients were
// rebuilt.
type NewInformerFunc func(*Clients) cache.SharedIndexInformer

// InformerManager runs informers in member clusters for the controllers of
// the control plane: one informer per member and key, shared by whoever asks
// for the same key. A member's informers run until Stop, until the member's
// clients are rebuilt (new endpoint or credentials: they are restarted on the
// next request), or until the manager stops.
//
// Add it to the controller-runtime manager (it is a Runnable) so that it
// stops everything on shutdown. It is safe for concurrent use.
type InformerManager struct {
	clients *ClientCache
	logger  logr.Logger

	mu      sync.Mutex
	stopped bool
	members map[string]*memberInformers
}

// memberInformers are the informers of one member, all built from the same
// clients.
type memberInformers struct {
	clients   *Clients
	informers map[string]*runningInformer
}

type runningInformer struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewInformerManager returns a manager that gets members' clients from
// clients and logs through logger.
func NewInformerManager(clients *ClientCache, logger logr.Logger) *InformerManager {
	return &InformerManager{clients: clients, logger: logger, members: map[string]*memberInformers{}}
}

// Informer returns the informer of the member cluster under key, building it
// with newInformer and starting it on first use. The informer may not have
// synced yet: check HasSynced before trusting its store. Callers should ask
// again rather than keep the informer, since it is replaced when the
// member's clients are rebuilt; event handlers added to the old one must be
// added to the new one. A member whose Cluster is deleted keeps its
// informers until Stop.
func (m *InformerManager) Informer(ctx context.Context, cluster, key string, newInformer NewInformerFunc) (cache.SharedIndexInformer, error) {
	// Outside the lock: it reads the Cluster and Secret.
	clients, err := m.clients.Get(ctx, cluster)
	if err != nil {
		return nil, err
	}

	m.mu.Lock()
	var stale []*runningInformer
	// Waiting for stale informers to end happens after unlocking: an informer
	// in the middle of a list from a slow member takes a moment to return.
	defer func() {
		m.mu.Unlock()
		waitStopped(stale)
	}()
	if m.stopped {
		return nil, ErrInformerManagerStopped
	}
	member := m.members[cluster]
	if member != nil && member.clients != clients {
		// New endpoint or credentials: what runs uses the old ones.
		m.logger.Info("Restarting member informers after its clients were rebuilt", "cluster", cluster, "informers", len(member.informers))
		stale = member.cancelAll()
		member = nil
	}
	if member == nil {
		member = &memberInformers{clients: clients, informers: map[string]*runningInformer{}}
		m.members[cluster] = member
	}
	if running, ok := member.informers[key]; ok {
		return running.informer, nil
	}

	informer := newInformer(clients)
	logger := m.logger.WithValues("cluster", cluster, "informer", key)
	// The reflector logs its list and watch errors through this logger, so
	// they say which member failed.
	runCtx, cancel := context.WithCancel(logr.NewContext(context.Background(), logger))
	running := &runningInformer{informer: informer, cancel: cancel, done: make(chan struct{})}
	member.informers[key] = running
	go func() {
		defer close(running.done)
		informer.RunWithContext(runCtx)
	}()
	logger.V(1).Info("Started member informer")
	return informer, nil
}

// Lookup returns the member's informer under key if it runs, and never
// starts one: a reader that only wants to consult a cache must not revive an
// informer that its owner has just stopped.
func (m *InformerManager) Lookup(cluster, key string) (cache.SharedIndexInformer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	member := m.members[cluster]
	if member == nil {
		return nil, false
	}
	running, ok := member.informers[key]
	if !ok {
		return nil, false
	}
	return running.informer, true
}

// Dynamic returns the started informer of gvr across all namespaces of the
// member, with its objects as unstructured.
func (m *InformerManager) Dynamic(ctx context.Context, cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
	return m.Informer(ctx, cluster, DynamicKey(gvr), func(c *Clients) cache.SharedIndexInformer {
		return dynamicinformer.NewFilteredDynamicInformer(c.Dynamic, gvr, "", 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	})
}

// DynamicKey is the key under which Dynamic runs the informer of gvr.
func DynamicKey(gvr schema.GroupVersionResource) string {
	return "dynamic/" + gvr.String()
}

// StopDynamic stops the member's dynamic informer of gvr, if running.
func (m *InformerManager) StopDynamic(cluster string, gvr schema.GroupVersionResource) {
	m.StopInformer(cluster, DynamicKey(gvr))
}

// StopInformer stops the member's informer under key, if running, and waits
// for it to end.
func (m *InformerManager) StopInformer(cluster, key string) {
	m.mu.Lock()
	var stopped []*runningInformer
	if member := m.members[cluster]; member != nil {
		if running, ok := member.informers[key]; ok {
			running.cancel()
			stopped = append(stopped, running)
			delete(member.informers, key)
			m.logger.V(1).Info("Stopped member informer", "cluster", cluster, "informer", key)
		}
		if len(member.informers) == 0 {
			delete(m.members, cluster)
		}
	}
	m.mu.Unlock()
	waitStopped(stopped)
}

// Stop stops every informer of the member, as when its Cluster is deleted,
// and waits for them to end.
func (m *InformerManager) Stop(cluster string) {
	m.mu.Lock()
	var stopped []*runningInformer
	if member := m.members[cluster]; member != nil {
		stopped = member.cancelAll()
		delete(m.members, cluster)
		m.logger.V(1).Info("Stopped member informers", "cluster", cluster, "informers", len(stopped))
	}
	m.mu.Unlock()
	waitStopped(stopped)
}

// Running lists the keys of the member's running informers, sorted.
func (m *InformerManager) Running(cluster string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	member := m.members[cluster]
	if member == nil {
		return nil
	}
	keys := make([]string, 0, len(member.informers))
	for k := range member.informers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Start waits until ctx is done, then stops every informer and refuses new
// ones. It implements controller-runtime's manager.Runnable.
func (m *InformerManager) Start(ctx context.Context) error {
	<-ctx.Done()
	m.mu.Lock()
	m.stopped = true
	var stopped []*runningInformer
	for name, member := range m.members {
		stopped = append(stopped, member.cancelAll()...)
		delete(m.members, name)
	}
	m.mu.Unlock()
	waitStopped(stopped)
	return nil
}

// NeedLeaderElection is false: informers are started by controllers, which
// run only while leading; this runnable only has to stop them.
func (m *InformerManager) NeedLeaderElection() bool { return false }

// cancelAll cancels every informer of the member and returns them.
func (mi *memberInformers) cancelAll() []*runningInformer {
	stopped := make([]*runningInformer, 0, len(mi.informers))
	for key, running := range mi.informers {
		running.cancel()
		stopped = append(stopped, running)
		delete(mi.informers, key)
	}
	return stopped
}

// waitStopped waits for cancelled informers to return, so that nothing of a
// stopped member keeps running.
func waitStopped(stopped []*runningInformer) {
	for _, r := range stopped {
		<-r.done
	}
}
