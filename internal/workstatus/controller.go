// Package workstatus is the work-status controller (of the controller-manager
// for Push members, of the agent for its Pull member): it watches,
// in each member, the objects that Works put there, reflects their status
// and health (resource interpreter ReflectStatus and InterpretHealth) into
// Work.status.manifestStatuses, and hands the Work back to the execution
// controller when a member object was deleted or changed behind the
// control plane's back.
//
// Member informers run only for the resources some Work's manifests use,
// only over objects labelled karmada.io/managed=true, and are stopped when
// no Work needs them; they are shared with the execution controller
// (execution.ManagedObjects).
package workstatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/manifeststatus"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName names the controller and its events.
const ControllerName = "work-status-controller"

// DefaultMaxConcurrentReconciles is the default of the Reconciler's
// MaxConcurrentReconciles.
const DefaultMaxConcurrentReconciles = 10

const (
	// syncWait is how soon to look again while a member informer is still
	// listing.
	syncWait = time.Second
	// resyncPeriod brings every Work back now and then, so that nothing
	// depends on an event having been seen.
	resyncPeriod = 10 * time.Minute
)

// Reconciler reflects member status into Works. Set the exported fields,
// then call SetupWithManager.
type Reconciler struct {
	// SyncMode is the mode of the clusters whose Works it reflects, as the
	// execution controller's beside it. Default: Push.
	SyncMode clusterv1alpha1.ClusterSyncMode
	// Client reads Works and Clusters through the manager's cache and writes
	// Work status.
	Client      client.Client
	Recorder    events.EventRecorder
	Members     *membercluster.ClientCache
	Informers   *membercluster.InformerManager
	Interpreter interpreter.Interpreter
	// Reapply, when set, receives the Works whose member objects were
	// deleted or changed behind the control plane's back; the execution
	// controller reads it (its Reapply) and applies them again. Give it a
	// buffer (a few hundred): sends never block.
	Reapply chan<- event.GenericEvent
	// MaxConcurrentReconciles bounds the Works reflected at once. Default:
	// DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
	// RateLimiter, when set, paces the retries of the controller's work
	// queue (karmada-agent's --rate-limiter-* flags); default:
	// controller-runtime's.
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]

	events  *queueSource
	watcher *watcher
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the controller: it watches Works in execution
// namespaces, Clusters turning Ready, and the member objects of the Works.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Members == nil || r.Informers == nil || r.Interpreter == nil {
		return errors.New("work-status controller: Client, Recorder, Members, Informers and Interpreter are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	if r.SyncMode == "" {
		r.SyncMode = clusterv1alpha1.Push
	}
	r.events = &queueSource{}
	r.watcher = newWatcher(execution.NewManagedObjects(r.Informers), r.events)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(execution.InExecutionSpace(), predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return execution.WorkChanged(e.ObjectOld, e.ObjectNew) || firstApplied(e.ObjectOld, e.ObjectNew)
		}})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(execution.WorksOfCluster(r.Client)), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return execution.ClusterChanged(e.ObjectOld, e.ObjectNew) },
		})).
		WatchesRawSource(source.Func(r.events.start)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles, RateLimiter: r.RateLimiter}).
		Complete(r)
}

// Reconcile reflects the member status of one Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	clusterName, ok := names.ClusterOfExecutionSpace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.watcher.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Work: %w", err)
	}
	if err := workcache.Expand(work); err != nil {
		return ctrl.Result{}, err
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.watcher.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", clusterName, err)
	}
	if membercluster.SyncModeOf(cluster) != r.SyncMode || !cluster.DeletionTimestamp.IsZero() || !work.DeletionTimestamp.IsZero() {
		// The other mode's controller reports this member; objects of a
		// Work or member that is going need no status.
		r.watcher.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if !execution.IsReady(cluster) {
		// The informers keep retrying; the member turning Ready brings the
		// Work back.
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("cluster", clusterName))

	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	targets, errs := execution.Targets(work, clients.Client.RESTMapper())
	for _, err := range errs {
		if !execution.NothingApplied(err) {
			// Discovery failed: keep watching what was watched until the
			// member answers.
			return ctrl.Result{}, fmt.Errorf("resolving manifests: %w", err)
		}
	}
	informers, err := r.watcher.watch(ctx, req.NamespacedName, clusterName, resourcesOf(targets))
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, informer := range informers {
		if !informer.HasSynced() {
			return ctrl.Result{RequeueAfter: syncWait}, nil
		}
	}

	if firstApplyPending(work) {
		// The execution controller writes the first entries with Applied,
		// in one write; the Applied condition appearing brings the Work
		// back here.
		return ctrl.Result{}, nil
	}
	observed := memberObjects(targets, informers)
	reflectErr := r.reflect(ctx, work, targets, observed)
	handedOver := r.reapplyIfDrifted(ctx, work, targets, observed)
	switch {
	case reflectErr != nil:
		return ctrl.Result{}, reflectErr
	case !handedOver:
		return ctrl.Result{RequeueAfter: syncWait}, nil
	}
	return ctrl.Result{RequeueAfter: resyncPeriod}, nil
}

func resourcesOf(targets []execution.Target) []schema.GroupVersionResource {
	gvrs := make([]schema.GroupVersionResource, 0, len(targets))
	for _, t := range targets {
		gvrs = append(gvrs, t.Mapping.Resource)
	}
	return gvrs
}

// memberObjects decodes, once per reconcile, the cached member object of
// each target; nil where there is none.
func memberObjects(targets []execution.Target, informers map[schema.GroupVersionResource]cache.SharedIndexInformer) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(targets))
	for i, t := range targets {
		item, found, err := informers[t.Mapping.Resource].GetStore().GetByKey(t.Key())
		if err != nil || !found {
			continue
		}
		if obj, err := execution.FromCache(item); err == nil {
			out[i] = obj
		}
	}
	return out
}

// reflect writes manifestStatuses from the member objects, with events for
// what changed and what failed. Objects from the informers are only read.
func (r *Reconciler) reflect(ctx context.Context, work *workv1alpha1.Work, targets []execution.Target, observed []*unstructured.Unstructured) error {
	reflector := manifeststatus.Reflector{Interpreter: r.Interpreter, Recorder: r.Recorder}
	statuses := make([]workv1alpha1.ManifestStatus, 0, len(targets))
	var errs []error
	for i, t := range targets {
		if observed[i] == nil || !execution.ManagedBy(observed[i], work) {
			continue
		}
		ms, err := reflector.Reflect(ctx, work, t.Identifier(), t, observed[i])
		statuses = append(statuses, ms)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if manifeststatus.Equal(work.Status.ManifestStatuses, statuses) {
		return errors.Join(errs...)
	}
	updated := work.DeepCopy()
	updated.Status.ManifestStatuses = statuses
	// Only manifestStatuses changes, so the merge patch leaves the
	// execution controller's conditions alone.
	if err := r.Client.Status().Patch(ctx, updated, client.MergeFrom(work)); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("patching Work status: %w", err))
	}
	return errors.Join(errs...)
}

// reapplyIfDrifted hands the Work to the execution controller when one of
// its member objects went away or no longer has the desired values. It
// reports false when that was needed but Reapply was full: never blocking
// keeps a worker from hanging on a consumer that does not read.
func (r *Reconciler) reapplyIfDrifted(ctx context.Context, work *workv1alpha1.Work, targets []execution.Target, observed []*unstructured.Unstructured) bool {
	if r.Reapply == nil || !dispatched(work) {
		return true
	}
	log := ctrl.LoggerFrom(ctx)
	for i, t := range targets {
		found := observed[i] != nil
		s := memberState{found: found}
		if found {
			s.managed = execution.ManagedBy(observed[i], work)
			if s.managed {
				inSync, err := execution.InSync(ctx, r.Interpreter, t, observed[i])
				if err != nil {
					log.Error(err, "Comparing the member object with its manifest", "object", t.String())
					continue
				}
				s.inSync = inSync
			}
		}
		if !drifted(s) {
			continue
		}
		log.Info("Member object deleted or changed behind the control plane's back; applying again", "object", t.String(), "found", found)
		ref := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: work.Namespace, Name: work.Name}}
		select {
		case r.Reapply <- event.GenericEvent{Object: ref}:
			return true
		default:
			log.V(1).Info("Reapply channel full; trying again shortly")
			return false
		}
	}
	return true
}
