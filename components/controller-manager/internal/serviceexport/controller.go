package serviceexport

import (
	"context"
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "service-export-controller"

// The member resources the controller watches.
var (
	ServiceExportGVR = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "serviceexports"}
	EndpointSliceGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// syncRecheck is how soon a Service is looked at again while the member's
// informers have not synced yet.
const syncRecheck = time.Second

// Key is one Service of one member: what a reconcile looks at.
type Key struct {
	Cluster, Namespace, Name string
}

func (k Key) String() string { return k.Cluster + "/" + k.Namespace + "/" + k.Name }

// Reconciler collects the EndpointSlices of exported Services. Set the
// exported fields, then call SetupWithManager.
type Reconciler struct {
	// Client reads Clusters and Works through the manager's cache and
	// writes Works.
	Client client.Client
	// Informers runs the member informers of ServiceExports and
	// EndpointSlices.
	Informers *membercluster.InformerManager
	// MaxConcurrentReconciles bounds the Services synced at once. Default: 5.
	MaxConcurrentReconciles int

	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[Key]
	// handled is the informer instance the event handler was added to, by
	// member and resource; a new instance (the member's clients were
	// rebuilt) needs it again.
	handled map[string]cache.SharedIndexInformer
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch

// SetupWithManager registers the controller: it watches the Works that
// carry ServiceExports (an applied one starts the member's informers), the
// collected Works, and the members' ServiceExports and EndpointSlices.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Informers == nil {
		return errors.New("service-export controller: Client and Informers are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	r.handled = map[string]cache.SharedIndexInformer{}
	return builder.TypedControllerManagedBy[Key](mgr).
		Named(ControllerName).
		Watches(&workv1alpha1.Work{}, handler.TypedEnqueueRequestsFromMapFunc(keysOfWork), builder.WithPredicates(execution.InExecutionSpace())).
		WatchesRawSource(source.TypedFunc[Key](func(_ context.Context, q workqueue.TypedRateLimitingInterface[Key]) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.queue = q
			return nil
		})).
		WithOptions(controller.TypedOptions[Key]{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// keysOfWork maps a Work to the Services it concerns: those of the
// ServiceExports it carries once it is applied (their member needs the
// informers), and the Service of a collected Work (one deleted or changed
// behind the controller's back is made right again).
func keysOfWork(_ context.Context, obj client.Object) []Key {
	work, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return nil
	}
	cluster, _ := names.ClusterOfExecutionSpace(work.Namespace)
	if slices.Contains(ManagedBy(work.Labels), ManagedByKind) {
		return []Key{{Cluster: cluster, Namespace: work.Labels[workv1alpha1.ServiceNamespaceLabel], Name: work.Labels[workv1alpha1.ServiceNameLabel]}}
	}
	if !meta.IsStatusConditionTrue(work.Status.Conditions, workv1alpha1.WorkApplied) {
		return nil
	}
	work = work.DeepCopy()
	if err := workcache.Expand(work); err != nil {
		return nil
	}
	var out []Key
	for _, m := range work.Spec.Workload.Manifests {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(m.Raw, &head); err != nil {
			continue
		}
		if head.Kind == "ServiceExport" && strings.HasPrefix(head.APIVersion, ServiceExportGVR.Group+"/") {
			out = append(out, Key{Cluster: cluster, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name})
		}
	}
	return out
}

// Reconcile makes the collected Works of one Service of a member match its
// EndpointSlices while it is exported, and removes them once it is not.
func (r *Reconciler) Reconcile(ctx context.Context, key Key) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", key.Cluster, "service", key.Namespace+"/"+key.Name)
	ctx = ctrl.LoggerInto(ctx, log)
	if key.Cluster == "" || key.Name == "" {
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: key.Cluster}, cluster); err != nil {
		// A Cluster that is gone takes its execution namespace, and the
		// collected Works, with it.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || membercluster.SyncModeOf(cluster) != clusterv1alpha1.Push {
		// A Pull member is out of the control plane's reach.
		return ctrl.Result{}, nil
	}
	exports, slicesInformer, err := r.informers(ctx, key.Cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !exports.HasSynced() || !slicesInformer.HasSynced() {
		log.V(1).Info("Member informers not synced yet")
		return ctrl.Result{RequeueAfter: syncRecheck}, nil
	}

	_, exported, err := exports.GetStore().GetByKey(key.Namespace + "/" + key.Name)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading ServiceExport: %w", err)
	}
	desired := map[string][]byte{}
	if exported {
		desired, err = r.memberSlices(slicesInformer, key)
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	var works workv1alpha1.WorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(names.ExecutionSpace(key.Cluster)), client.MatchingLabels{
		workv1alpha1.ServiceNamespaceLabel: key.Namespace,
		workv1alpha1.ServiceNameLabel:      key.Name,
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing collected Works: %w", err)
	}
	var errs []error
	for i := range works.Items {
		w := &works.Items[i]
		if _, ok := desired[w.Name]; ok || !slices.Contains(ManagedBy(w.Labels), ManagedByKind) {
			continue
		}
		if err := r.release(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		if err := r.ensureWork(ctx, key, name, desired[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// memberSlices are the manifests of the member's own EndpointSlices of the
// Service, by collected Work name.
func (r *Reconciler) memberSlices(informer cache.SharedIndexInformer, key Key) (map[string][]byte, error) {
	items, err := informer.GetIndexer().ByIndex(cache.NamespaceIndex, key.Namespace)
	if err != nil {
		return nil, fmt.Errorf("listing member EndpointSlices: %w", err)
	}
	out := map[string][]byte{}
	for _, item := range items {
		slice, ok := item.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		labels := slice.GetLabels()
		if labels[discoveryv1.LabelServiceName] != key.Name || !Collectable(slice) {
			continue
		}
		raw, err := Manifest(slice)
		if err != nil {
			return nil, err
		}
		out[WorkName(slice)] = raw
	}
	return out, nil
}

// ensureWork creates the collected Work, or brings an existing one up to
// date: the manifest, this controller's labels and the finalizer.
func (r *Reconciler) ensureWork(ctx context.Context, key Key, name string, manifest []byte) error {
	ns := names.ExecutionSpace(key.Cluster)
	existing := &workv1alpha1.Work{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, existing)
	switch {
	case apierrors.IsNotFound(err):
		work := CollectedWork(ns, name, key.Namespace, key.Name, ManagedByKind, manifest)
		if err := r.Client.Create(ctx, work); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating collected Work %s/%s: %w", ns, name, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Collected an EndpointSlice", "work", name)
		return nil
	case err != nil:
		return fmt.Errorf("getting collected Work %s/%s: %w", ns, name, err)
	}
	if !existing.DeletionTimestamp.IsZero() {
		// Made again once it is gone.
		return nil
	}
	same, err := workcache.SameManifest(existing, 0, manifest)
	if err != nil {
		return err
	}
	want := CollectedWork(ns, name, key.Namespace, key.Name, WithManager(ManagedBy(existing.Labels), ManagedByKind), manifest)
	labelsOK := true
	for k, v := range want.Labels {
		labelsOK = labelsOK && existing.Labels[k] == v
	}
	if same && len(existing.Spec.Workload.Manifests) == 1 && labelsOK &&
		controllerutil.ContainsFinalizer(existing, workv1alpha1.EndpointSliceControllerFinalizer) {
		return nil
	}
	work := existing.DeepCopy()
	if err := workcache.Expand(work); err != nil {
		return err
	}
	if work.Labels == nil {
		work.Labels = map[string]string{}
	}
	maps.Copy(work.Labels, want.Labels)
	controllerutil.AddFinalizer(work, workv1alpha1.EndpointSliceControllerFinalizer)
	work.Spec.SuspendDispatching = want.Spec.SuspendDispatching
	work.Spec.Workload = want.Spec.Workload
	if err := r.Client.Update(ctx, work); err != nil {
		return fmt.Errorf("updating collected Work %s/%s: %w", ns, name, err)
	}
	return nil
}

// release takes this controller's part out of a collected Work whose
// EndpointSlice is no longer exported: it deletes the Work, or, when a
// MultiClusterService also collects it, leaves it to that one alone.
func (r *Reconciler) release(ctx context.Context, w *workv1alpha1.Work) error {
	rest := WithoutManager(ManagedBy(w.Labels), ManagedByKind)
	// The patch is computed on the Work as the server has it, manifests
	// unpacked.
	if err := workcache.Expand(w); err != nil {
		return err
	}
	if len(rest) == 0 {
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting collected Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Removed a collected EndpointSlice", "work", w.Name)
		return nil
	}
	base := w.DeepCopy()
	delete(w.Labels, workv1alpha1.ServiceNamespaceLabel)
	delete(w.Labels, workv1alpha1.ServiceNameLabel)
	w.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] = strings.Join(rest, ".")
	if err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("releasing collected Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// informers returns the member's running ServiceExport and EndpointSlice
// informers, with the controller's event handler on each.
func (r *Reconciler) informers(ctx context.Context, cluster string) (exports, endpointSlices cache.SharedIndexInformer, err error) {
	out := make([]cache.SharedIndexInformer, 0, 2)
	for _, gvr := range []schema.GroupVersionResource{ServiceExportGVR, EndpointSliceGVR} {
		informer, err := r.Informers.Dynamic(ctx, cluster, gvr)
		if err != nil {
			return nil, nil, fmt.Errorf("starting the member's %s informer: %w", gvr.Resource, err)
		}
		r.mu.Lock()
		id := cluster + "/" + gvr.String()
		if r.handled[id] != informer {
			if _, err := informer.AddEventHandler(r.handler(cluster, gvr)); err != nil {
				r.mu.Unlock()
				return nil, nil, fmt.Errorf("watching the member's %s: %w", gvr.Resource, err)
			}
			r.handled[id] = informer
		}
		r.mu.Unlock()
		out = append(out, informer)
	}
	return out[0], out[1], nil
}

// handler enqueues the Service a member object is about: a ServiceExport's
// own name, an EndpointSlice's kubernetes.io/service-name.
func (r *Reconciler) handler(cluster string, gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		key := Key{Cluster: cluster, Namespace: m.GetNamespace(), Name: m.GetName()}
		if gvr == EndpointSliceGVR {
			key.Name = m.GetLabels()[discoveryv1.LabelServiceName]
			if key.Name == "" {
				return
			}
		}
		r.mu.Lock()
		q := r.queue
		r.mu.Unlock()
		if q != nil {
			q.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}
