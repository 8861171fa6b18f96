// Package execution is the execution controller (of the controller-manager
// for Push members, of the agent for its Pull member): it applies the
// manifests of every Work in an execution namespace karmada-es-<cluster> to
// that member cluster, and removes them (or, with
// spec.preserveResourcesOnDeletion, releases them) when the Work goes.
//
// Manifests are written with server-side apply under the field manager
// "flotilla", so that fields others own in the member (defaults, what member
// controllers set) are left alone, and with the resource interpreter's
// Retain for the fields a member owns that the manifest also sets. An
// object already as desired is not written again: the hash of the desired
// object is kept on the member object, and a cached member object with the
// same hash that still has every desired value is in sync.
//
// A member object of the same name that the Work does not manage is taken
// over only when the manifest's work.karmada.io/conflict-resolution
// annotation says overwrite; otherwise the Work reports Applied=False with
// reason ResourceConflict.
//
// One Reconciler serves one sync mode: the controller-manager's applies the
// Works of Push clusters, reaching each member from the control plane; an
// agent's applies those of its own Pull cluster from inside the member.
package execution

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/manifeststatus"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName names the controller and its events.
const ControllerName = "execution-controller"

// FieldManager owns, in members, the fields the control plane applies.
const FieldManager = "flotilla"

// Defaults of the Reconciler's settings.
const (
	DefaultMaxConcurrentReconciles = 20
	DefaultMemberTimeout           = 30 * time.Second
)

const (
	// notReadyRecheck is how soon a Work of a member that is not Ready is
	// looked at again; the member turning Ready brings it back sooner.
	notReadyRecheck = 30 * time.Second
	// conflictRecheck is how soon a Work blocked by a conflicting member
	// object tries again: the object may have been removed or released,
	// which no watch of this controller sees.
	conflictRecheck = 30 * time.Second
	// terminatingRecheck waits for a member object being deleted to go
	// before recreating it.
	terminatingRecheck = 2 * time.Second
	// conflictRetry requeues after a write to the Work lost a race.
	conflictRetry = 200 * time.Millisecond
)

// Reconciler applies Works to the member clusters of one sync mode. Set the
// exported fields, then call SetupWithManager.
type Reconciler struct {
	// SyncMode is the mode of the clusters whose Works it applies; Works of
	// the other mode are someone else's (the agent in a Pull member, or the
	// controller-manager for Push). Default: Push.
	SyncMode clusterv1alpha1.ClusterSyncMode
	// Client reads Works and Clusters through the manager's cache and writes
	// Works.
	Client   client.Client
	Recorder events.EventRecorder
	// Members gives each member's clients.
	Members *membercluster.ClientCache
	// Informers, when set, has the informers of managed member objects that
	// the work-status controller runs, so that objects already in sync cost
	// no request to the member. Without it, or before they run, manifests
	// are read from the member.
	Informers   *membercluster.InformerManager
	Interpreter interpreter.Interpreter
	// Reapply, when set, enqueues the Works it receives: the work-status
	// controller sends those whose member objects were deleted or changed
	// behind the control plane's back.
	Reapply <-chan event.GenericEvent
	// MaxConcurrentReconciles bounds the Works applied at once. Default:
	// DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
	// MemberTimeout bounds each request to a member. Default:
	// DefaultMemberTimeout.
	MemberTimeout time.Duration
	// RateLimiter, when set, paces the retries of the controller's work
	// queue (karmada-agent's --rate-limiter-* flags); default:
	// controller-runtime's.
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]

	objects   *ManagedObjects
	reflector manifeststatus.Reflector
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the controller: it watches Works in execution
// namespaces, Clusters (a member turning Ready or leaving brings its Works
// back) and Reapply.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Members == nil || r.Interpreter == nil {
		return errors.New("execution controller: Client, Recorder, Members and Interpreter are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	if r.SyncMode == "" {
		r.SyncMode = clusterv1alpha1.Push
	}
	if r.MemberTimeout <= 0 {
		r.MemberTimeout = DefaultMemberTimeout
	}
	if r.Informers != nil {
		r.objects = NewManagedObjects(r.Informers)
	}
	r.reflector = manifeststatus.Reflector{Interpreter: r.Interpreter, Recorder: r.Recorder}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(InExecutionSpace(), predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return WorkChanged(e.ObjectOld, e.ObjectNew)
		}})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(WorksOfCluster(r.Client)), builder.WithPredicates(predicate.Funcs{
			// A deleted Cluster's Works are released without cleaning up.
			UpdateFunc: func(e event.UpdateEvent) bool { return ClusterChanged(e.ObjectOld, e.ObjectNew) },
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles, RateLimiter: r.RateLimiter})
	if r.Reapply != nil {
		b = b.WatchesRawSource(source.Channel(r.Reapply, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}

// InExecutionSpace passes Works in execution namespaces only.
func InExecutionSpace() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := names.ClusterOfExecutionSpace(obj.GetNamespace())
		return ok
	})
}

// WorkChanged passes the Work updates that change what is applied: spec
// (generation), labels (the permanent id) and deletion. Status writes, the
// controllers' own, are skipped, and so is a first permanent id, which the
// execution controller gives a Work in the reconcile that goes on to apply
// it: reconciling again for it would only double the work of every new
// Work.
func WorkChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp()) ||
		!maps.Equal(withoutNewID(oldObj.GetLabels(), newObj.GetLabels()), newObj.GetLabels())
}

// withoutNewID returns oldLabels with the permanent id newLabels got, when
// oldLabels had none, so that only other label changes show.
func withoutNewID(oldLabels, newLabels map[string]string) map[string]string {
	id, ok := newLabels[workv1alpha1.WorkPermanentIDLabel]
	if _, had := oldLabels[workv1alpha1.WorkPermanentIDLabel]; had || !ok {
		return oldLabels
	}
	out := maps.Clone(oldLabels)
	if out == nil {
		out = map[string]string{}
	}
	out[workv1alpha1.WorkPermanentIDLabel] = id
	return out
}

// ClusterChanged passes the Cluster updates after which its Works need
// another look: Ready changed, deletion started, or the connection changed.
func ClusterChanged(oldObj, newObj client.Object) bool {
	oldC, okOld := oldObj.(*clusterv1alpha1.Cluster)
	newC, okNew := newObj.(*clusterv1alpha1.Cluster)
	if !okOld || !okNew {
		return true
	}
	return oldC.Generation != newC.Generation ||
		!oldC.DeletionTimestamp.Equal(newC.DeletionTimestamp) ||
		IsReady(oldC) != IsReady(newC)
}

// IsReady reports whether the Cluster's Ready condition is True.
func IsReady(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// WorksOfCluster maps a Cluster to the Works in its execution namespace,
// read from reader (the manager's cache).
func WorksOfCluster(reader client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		var works workv1alpha1.WorkList
		if err := reader.List(ctx, &works, client.InNamespace(names.ExecutionSpace(obj.GetName()))); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the Works of a cluster", "cluster", obj.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(works.Items))
		for i := range works.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&works.Items[i])})
		}
		return reqs
	}
}

// Reconcile applies one Work to its member, or cleans up after it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	clusterName, ok := names.ClusterOfExecutionSpace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := workcache.Expand(work); err != nil {
		return ctrl.Result{}, err
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterName}, cluster); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", clusterName, err)
		}
		cluster = nil
	}
	if cluster != nil && membercluster.SyncModeOf(cluster) != r.SyncMode {
		// The other mode's executor applies it, under the same finalizer.
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("cluster", clusterName))

	if !work.DeletionTimestamp.IsZero() {
		return requeueOnConflict(ctx, r.reconcileDelete(ctx, work, cluster))
	}
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() {
		// Nothing to apply to: the cluster controller deletes the Works of
		// a Cluster that leaves, and a new Cluster brings them back here.
		ctrl.LoggerFrom(ctx).V(1).Info("Cluster missing or leaving; not applying")
		return ctrl.Result{}, nil
	}

	if err := r.ensureMetadata(ctx, work); err != nil {
		return requeueOnConflict(ctx, err)
	}

	base := work.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, base, work); err != nil {
			res, retErr = requeueOnConflict(ctx, errors.Join(retErr, err))
		}
	}()

	if r.reconcileDispatching(work) {
		return ctrl.Result{}, nil
	}
	if !IsReady(cluster) {
		ctrl.LoggerFrom(ctx).V(1).Info("Cluster not Ready; not applying")
		return ctrl.Result{RequeueAfter: notReadyRecheck}, nil
	}
	return r.apply(ctx, cluster, work)
}

// ensureMetadata adds the finalizer and, when the Work has none yet, a
// permanent id, which member objects carry so they can be traced to the
// Work. The webhook normally sets it; this keeps the path working without
// it.
func (r *Reconciler) ensureMetadata(ctx context.Context, work *workv1alpha1.Work) error {
	hasID := work.Labels[workv1alpha1.WorkPermanentIDLabel] != ""
	if hasID && controllerutil.ContainsFinalizer(work, workv1alpha1.ExecutionControllerFinalizer) {
		return nil
	}
	base := work.DeepCopy()
	controllerutil.AddFinalizer(work, workv1alpha1.ExecutionControllerFinalizer)
	if !hasID {
		if work.Labels == nil {
			work.Labels = map[string]string{}
		}
		work.Labels[workv1alpha1.WorkPermanentIDLabel] = string(uuid.NewUUID())
	}
	// The lock keeps others' finalizers and labels: a merge patch replaces
	// the whole finalizer list.
	if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding finalizer and permanent id: %w", err)
	}
	return nil
}

// patchStatus writes the status if it changed: the conditions this
// controller owns and, for a new Work, the first manifest status entries.
// It is an update of the status subresource, which fails if the Work
// changed since it was read (the work-status controller also writes the
// entries; the change brings the Work back) and costs the API server less
// than a patch of the same object.
func (r *Reconciler) patchStatus(ctx context.Context, base, work *workv1alpha1.Work) error {
	if manifeststatus.Equal(base.Status.ManifestStatuses, work.Status.ManifestStatuses) &&
		statusEqual(base.Status.Conditions, work.Status.Conditions) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, work); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("updating Work status: %w", err)
	}
	return nil
}

func statusEqual(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// requeueOnConflict retries soon, without an error in the log, after a
// write to the Work lost a race.
func requeueOnConflict(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Conflict writing the Work; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
