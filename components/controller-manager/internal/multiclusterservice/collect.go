package multiclusterservice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// CollectControllerName is Karmada's name of the collect controller.
const CollectControllerName = "endpointslice-collect-controller"

// collectRecheck is how soon a Service is looked at again while the
// member's informer has not synced yet.
const collectRecheck = time.Second

// CollectReconciler collects the EndpointSlices of MultiClusterService
// Services from provider clusters. Set the exported fields, then call
// SetupWithManager.
type CollectReconciler struct {
	// Client reads Clusters and Works through the manager's cache and
	// writes Works.
	Client client.Client
	// Informers runs the members' EndpointSlice informers.
	Informers *membercluster.InformerManager

	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[serviceexport.Key]
	handled map[string]cache.SharedIndexInformer
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete

// SetupWithManager registers the controller on the provider Works, the
// collected Works and the providers' EndpointSlices.
func (r *CollectReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Informers == nil {
		return errors.New("endpointslice-collect controller: Client and Informers are required")
	}
	r.handled = map[string]cache.SharedIndexInformer{}
	return builder.TypedControllerManagedBy[serviceexport.Key](mgr).
		Named(CollectControllerName).
		Watches(&workv1alpha1.Work{}, handler.TypedEnqueueRequestsFromMapFunc(collectKeysOfWork), builder.WithPredicates(execution.InExecutionSpace())).
		WatchesRawSource(source.TypedFunc[serviceexport.Key](func(_ context.Context, q workqueue.TypedRateLimitingInterface[serviceexport.Key]) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.queue = q
			return nil
		})).
		WithOptions(controller.TypedOptions[serviceexport.Key]{MaxConcurrentReconciles: 5}).
		Complete(r)
}

// collectKeysOfWork maps a provider Work, or a Work collected for a
// MultiClusterService, to its Service in its cluster.
func collectKeysOfWork(_ context.Context, obj client.Object) []serviceexport.Key {
	labels := obj.GetLabels()
	ns, name := labels[workv1alpha1.MultiClusterServiceNamespaceLabel], labels[workv1alpha1.MultiClusterServiceNameLabel]
	if ns == "" || name == "" {
		return nil
	}
	if obj.GetName() != names.Work(ns, name, Kind) && !slices.Contains(serviceexport.ManagedBy(labels), Kind) {
		return nil
	}
	cluster, _ := names.ClusterOfExecutionSpace(obj.GetNamespace())
	return []serviceexport.Key{{Cluster: cluster, Namespace: ns, Name: name}}
}

// Reconcile makes the Works collected for the MultiClusterService of one
// Service match the provider's EndpointSlices while the provider holds the
// MultiClusterService's Work, and removes them once it does not.
func (r *CollectReconciler) Reconcile(ctx context.Context, key serviceexport.Key) (ctrl.Result, error) {
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("cluster", key.Cluster, "service", key.Namespace+"/"+key.Name))
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: key.Cluster}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || membercluster.SyncModeOf(cluster) != clusterv1alpha1.Push {
		// A Pull member is out of the control plane's reach.
		return ctrl.Result{}, nil
	}
	ns := names.ExecutionSpace(key.Cluster)
	providerWork := &workv1alpha1.Work{}
	provider := true
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Work(key.Namespace, key.Name, Kind)}, providerWork); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		provider = false
	} else if !providerWork.DeletionTimestamp.IsZero() {
		provider = false
	}
	desired := map[string][]byte{}
	if provider {
		informer, err := r.informer(ctx, key.Cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !informer.HasSynced() {
			return ctrl.Result{RequeueAfter: collectRecheck}, nil
		}
		items, err := informer.GetIndexer().ByIndex(cache.NamespaceIndex, key.Namespace)
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, item := range items {
			slice, ok := item.(*unstructured.Unstructured)
			if !ok || slice.GetLabels()[discoveryv1.LabelServiceName] != key.Name || !serviceexport.Collectable(slice) {
				continue
			}
			raw, err := serviceexport.Manifest(slice)
			if err != nil {
				return ctrl.Result{}, err
			}
			desired[serviceexport.WorkName(slice)] = raw
		}
	}
	var works workv1alpha1.WorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(ns), client.MatchingLabels{
		workv1alpha1.MultiClusterServiceNamespaceLabel: key.Namespace,
		workv1alpha1.MultiClusterServiceNameLabel:      key.Name,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing collected Works: %w", err)
	}
	var errs []error
	for i := range works.Items {
		w := &works.Items[i]
		if _, ok := desired[w.Name]; ok || !slices.Contains(serviceexport.ManagedBy(w.Labels), Kind) {
			continue
		}
		if err := r.release(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		if err := r.ensureWork(ctx, ns, name, key, desired[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// ensureWork creates or updates the collected Work with this controller's
// labels, keeping those of the service-export controller.
func (r *CollectReconciler) ensureWork(ctx context.Context, ns, name string, key serviceexport.Key, manifest []byte) error {
	existing := &workv1alpha1.Work{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, existing)
	labels := func(current map[string]string) map[string]string {
		return map[string]string{
			workv1alpha1.MultiClusterServiceNamespaceLabel: key.Namespace,
			workv1alpha1.MultiClusterServiceNameLabel:      key.Name,
			workv1alpha1.EndpointSliceWorkManagedByLabel:   serviceexport.WithManager(serviceexport.ManagedBy(current), Kind),
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		work := serviceexport.CollectedWork(ns, name, "", "", "", manifest)
		work.Labels, work.Finalizers = labels(nil), nil
		if err := r.Client.Create(ctx, work); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating collected Work %s/%s: %w", ns, name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("getting collected Work %s/%s: %w", ns, name, err)
	}
	if !existing.DeletionTimestamp.IsZero() {
		return nil
	}
	same, err := workcache.SameManifest(existing, 0, manifest)
	if err != nil {
		return err
	}
	want := labels(existing.Labels)
	labelsOK := true
	for k, v := range want {
		labelsOK = labelsOK && existing.Labels[k] == v
	}
	if same && labelsOK {
		return nil
	}
	work := existing.DeepCopy()
	if err := workcache.Expand(work); err != nil {
		return err
	}
	if work.Labels == nil {
		work.Labels = map[string]string{}
	}
	maps.Copy(work.Labels, want)
	work.Spec.Workload.Manifests = serviceexport.CollectedWork(ns, name, "", "", "", manifest).Spec.Workload.Manifests
	if err := r.Client.Update(ctx, work); err != nil {
		return fmt.Errorf("updating collected Work %s/%s: %w", ns, name, err)
	}
	return nil
}

// release deletes a Work only this controller collects, or takes its part
// out of one the service-export controller also collects.
func (r *CollectReconciler) release(ctx context.Context, w *workv1alpha1.Work) error {
	rest := serviceexport.WithoutManager(serviceexport.ManagedBy(w.Labels), Kind)
	if err := workcache.Expand(w); err != nil {
		return err
	}
	if len(rest) == 0 {
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting collected Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		return nil
	}
	base := w.DeepCopy()
	delete(w.Labels, workv1alpha1.MultiClusterServiceNamespaceLabel)
	delete(w.Labels, workv1alpha1.MultiClusterServiceNameLabel)
	w.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] = strings.Join(rest, ".")
	if err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("releasing collected Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// informer returns the member's running EndpointSlice informer with the
// controller's handler on it.
func (r *CollectReconciler) informer(ctx context.Context, cluster string) (cache.SharedIndexInformer, error) {
	informer, err := r.Informers.Dynamic(ctx, cluster, serviceexport.EndpointSliceGVR)
	if err != nil {
		return nil, fmt.Errorf("starting the member's EndpointSlice informer: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handled[cluster] == informer {
		return informer, nil
	}
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil || m.GetLabels()[discoveryv1.LabelServiceName] == "" {
			return
		}
		r.mu.Lock()
		q := r.queue
		r.mu.Unlock()
		if q != nil {
			q.Add(serviceexport.Key{Cluster: cluster, Namespace: m.GetNamespace(), Name: m.GetLabels()[discoveryv1.LabelServiceName]})
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("watching the member's EndpointSlices: %w", err)
	}
	r.handled[cluster] = informer
	return informer, nil
}
