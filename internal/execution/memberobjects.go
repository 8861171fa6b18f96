package execution

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// lastAppliedAnnotation is kubectl's copy of the whole object; the cache
// has no use for it.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// managedSelector keeps the cache to what the federation manages.
var managedSelector = labels.SelectorFromSet(labels.Set{
	workv1alpha1.ManagedByKarmadaLabel: workv1alpha1.ManagedByKarmadaLabelValue,
}).String()

// ManagedObjects are informers, per member and resource, over the member
// objects labelled karmada.io/managed=true. The work-status controller
// starts and stops them as Works come and go and reflects status from them;
// the execution controller reads those running to skip writes of objects
// already in sync. They run in a membercluster.InformerManager, so both
// controllers share one informer per member and resource.
type ManagedObjects struct {
	informers *membercluster.InformerManager
}

// NewManagedObjects runs its informers in informers.
func NewManagedObjects(informers *membercluster.InformerManager) *ManagedObjects {
	return &ManagedObjects{informers: informers}
}

// ManagedObjectsKey is the InformerManager key of the informer of gvr.
func ManagedObjectsKey(gvr schema.GroupVersionResource) string {
	return "managed-objects/" + gvr.String()
}

// Informer returns the member's informer of gvr, starting it if needed. Ask
// again rather than keep it: it is replaced when the member's clients are
// rebuilt.
func (m *ManagedObjects) Informer(ctx context.Context, cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
	return m.informers.Informer(ctx, cluster, ManagedObjectsKey(gvr), func(c *membercluster.Clients) cache.SharedIndexInformer {
		informer := dynamicinformer.NewFilteredDynamicInformer(c.Dynamic, gvr, metav1.NamespaceAll, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			func(opts *metav1.ListOptions) { opts.LabelSelector = managedSelector },
		).Informer()
		// Before the informer runs, as SetTransform requires.
		_ = informer.SetTransform(compactForCache)
		return informer
	})
}

// Stop stops the member's informer of gvr.
func (m *ManagedObjects) Stop(cluster string, gvr schema.GroupVersionResource) {
	m.informers.StopInformer(cluster, ManagedObjectsKey(gvr))
}

// Get returns a copy of the cached object under key (namespace/name), and
// whether the informer of gvr runs and has synced; found is only
// meaningful when synced. It starts no informer: the work-status controller
// runs them while some Work needs them, and one started here, for a Work
// being deleted, would outlive every Work that needs it.
func (m *ManagedObjects) Get(_ context.Context, cluster string, gvr schema.GroupVersionResource, key string) (obj *unstructured.Unstructured, found, synced bool, err error) {
	informer, ok := m.informers.Lookup(cluster, ManagedObjectsKey(gvr))
	if !ok || !informer.HasSynced() {
		return nil, false, false, nil
	}
	item, found, err := informer.GetStore().GetByKey(key)
	if err != nil || !found {
		return nil, false, true, err
	}
	u, err := FromCache(item)
	if err != nil {
		return nil, false, true, err
	}
	return u, true, true, nil
}
