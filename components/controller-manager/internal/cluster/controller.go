// Package cluster is the cluster controller: for every Cluster it keeps the
// execution namespace where the member's Works live, the finalizer that
// cleans up after the member leaves, the Ready condition (Push: from probing
// the member's health endpoint; Pull: the agent's own report while its
// Lease karmada-cluster/<name> is renewed, Unknown once it is not), and the
// not-ready / unreachable scheduling taints that follow the Ready condition.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName names the controller, its events and its field manager.
const ControllerName = "cluster-controller"

// Event actions (events.k8s.io/v1 requires one).
const (
	actionCreateExecutionSpace = "CreateExecutionSpace"
	actionRemoveExecutionSpace = "RemoveExecutionSpace"
	actionTaint                = "TaintCluster"
)

const (
	// deletionPoll is how often a deleting Cluster checks that its Works and
	// execution namespace are gone; namespace deletion is asynchronous.
	deletionPoll = 2 * time.Second
	// conflictRetry requeues after a write lost a race with another writer
	// of the Cluster (the cluster-status controller patches it too).
	conflictRetry = 200 * time.Millisecond
)

// Reconciler reconciles Clusters. Set the exported fields, then call
// SetupWithManager.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader reads without the cache: Works are only listed while a
	// Cluster is deleted, which is no reason to cache every Work.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Members builds the clients the health probe uses.
	Members *membercluster.ClientCache
	// Informers, when set, has the informers of a deleted member stopped.
	Informers *membercluster.InformerManager
	Health    HealthOptions
	// MaxConcurrentReconciles bounds the members probed at once. Default: 5.
	MaxConcurrentReconciles int

	tracker *healthTracker
	leases  *leaseTracker
}

// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch

// SetupWithManager registers the controller: it watches Clusters, and the
// execution namespaces so that one deleted by hand is recreated at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.APIReader == nil || r.Recorder == nil || r.Members == nil {
		return errors.New("cluster controller: Client, APIReader, Recorder and Members are required")
	}
	r.Health = r.Health.withDefaults()
	r.tracker = newHealthTracker()
	r.leases = newLeaseTracker()
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return clusterChanged(e.ObjectOld, e.ObjectNew)
		}})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(clusterOfExecutionSpace), builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// clusterChanged filters Cluster updates down to those this controller acts
// on. Status updates by the cluster-status controller come every few seconds
// and are skipped, except a change of Ready, which moves the taints.
func clusterChanged(oldObj, newObj client.Object) bool {
	oldC, okOld := oldObj.(*clusterv1alpha1.Cluster)
	newC, okNew := newObj.(*clusterv1alpha1.Cluster)
	if !okOld || !okNew {
		return true
	}
	return oldC.Generation != newC.Generation ||
		!oldC.DeletionTimestamp.Equal(newC.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(oldC.Finalizers, newC.Finalizers) ||
		readyStatus(oldC) != readyStatus(newC)
}

func readyStatus(c *clusterv1alpha1.Cluster) metav1.ConditionStatus {
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		return cond.Status
	}
	return ""
}

func clusterOfExecutionSpace(_ context.Context, obj client.Object) []reconcile.Request {
	if name, ok := names.ClusterOfExecutionSpace(obj.GetName()); ok {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	return nil
}

// Reconcile brings one Cluster in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetMember(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cluster: %w", err)
	}

	if !cluster.DeletionTimestamp.IsZero() {
		res, err := r.reconcileDelete(ctx, cluster)
		return requeueOnConflict(ctx, res, err)
	}

	if !controllerutil.ContainsFinalizer(cluster, clusterv1alpha1.ClusterControllerFinalizer) {
		base := cluster.DeepCopy()
		controllerutil.AddFinalizer(cluster, clusterv1alpha1.ClusterControllerFinalizer)
		// The lock keeps a concurrent writer's finalizers: a merge patch
		// replaces the whole list.
		if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return requeueOnConflict(ctx, ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err))
		}
	}

	if err := r.ensureExecutionSpace(ctx, cluster); err != nil {
		return ctrl.Result{}, err
	}

	next, err := r.reconcileReady(ctx, cluster)
	if err != nil {
		return requeueOnConflict(ctx, ctrl.Result{}, err)
	}
	if err := r.reconcileTaints(ctx, cluster); err != nil {
		return requeueOnConflict(ctx, ctrl.Result{}, err)
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// requeueOnConflict retries soon, without an error in the log, after a write
// lost a race: the next attempt starts from the newer object.
func requeueOnConflict(ctx context.Context, res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Conflict writing the Cluster; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// ensureExecutionSpace creates the namespace karmada-es-<cluster> that holds
// the member's Works.
func (r *Reconciler) ensureExecutionSpace(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	name := names.ExecutionSpace(cluster.Name)
	existing := namespaceMetadata()
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, existing)
	if err == nil {
		// One being deleted is recreated once gone: its deletion is watched.
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting execution namespace %s: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{workv1alpha1.KarmadaSystemLabel: workv1alpha1.KarmadaSystemLabelValue},
	}}
	if err := r.Client.Create(ctx, ns); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// The cache lagged behind an earlier create.
			return nil
		}
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonCreateExecutionSpaceFailed, actionCreateExecutionSpace,
			"Failed to create execution namespace %s: %v", name, err)
		return fmt.Errorf("creating execution namespace %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created execution namespace", "namespace", name)
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, flotillaevents.ReasonCreateExecutionSpaceSucceed, actionCreateExecutionSpace,
		"Created execution namespace %s", name)
	return nil
}

// reconcileReady probes a Push member when due and writes the Ready
// condition if the decision changed it. It returns when to come back.
func (r *Reconciler) reconcileReady(ctx context.Context, cluster *clusterv1alpha1.Cluster) (time.Duration, error) {
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		// The agent in the member reports Ready itself; its lease says
		// whether it still does.
		return r.reconcileLeaseReady(ctx, cluster)
	}
	now := time.Now()
	if due, wait := r.tracker.due(cluster.Name, cluster.UID, now, r.Health.Period); !due {
		return wait, nil
	}
	obs := r.probe(ctx, cluster)
	s := r.tracker.observe(cluster.Name, cluster.UID, now, obs.healthy())
	stored := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	decided := decideReady(stored, obs, s, r.Health)
	decided.ObservedGeneration = cluster.Generation

	log := ctrl.LoggerFrom(ctx)
	if !obs.healthy() {
		log.V(1).Info("Member health probe failed", "status", obs.status, "reason", obs.reason, "message", obs.message, "detail", obs.detail, "streak", s.count)
	}
	if err := r.patchReady(ctx, cluster, decided); err != nil {
		return 0, fmt.Errorf("writing Ready condition: %w", err)
	}
	return r.Health.Period, nil
}

// probe checks the member's health through its cached clients. Clients that
// cannot be built (Secret missing, bad proxy URL) make the member
// unreachable.
func (r *Reconciler) probe(ctx context.Context, cluster *clusterv1alpha1.Cluster) observation {
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return observedUnreachable(err.Error())
	}
	return probe(ctx, clients.Discovery.RESTClient(), r.Health.Timeout)
}

// patchReady sets the Ready condition, retrying on conflict from a fresh
// read: the decision stands even if the cluster-status controller wrote in
// between, and a probe is not repeated for it.
func (r *Reconciler) patchReady(ctx context.Context, cluster *clusterv1alpha1.Cluster, ready metav1.Condition) error {
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
				return err
			}
		}
		first = false
		base := cluster.DeepCopy()
		old := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		var oldStatus metav1.ConditionStatus
		if old != nil {
			oldStatus = old.Status
		}
		meta.SetStatusCondition(&cluster.Status.Conditions, ready)
		if equality.Semantic.DeepEqual(base.Status, cluster.Status) {
			return nil
		}
		if err := r.Client.Status().Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		if oldStatus != ready.Status {
			ctrl.LoggerFrom(ctx).Info("Cluster readiness changed", "from", oldStatus, "to", ready.Status, "reason", ready.Reason, "message", ready.Message)
		}
		return nil
	})
}

// reconcileTaints makes spec.taints follow the stored Ready condition.
func (r *Reconciler) reconcileTaints(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	taints, added, removed := taintsFor(cluster.Spec.Taints, ready, metav1.Now())
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	base := cluster.DeepCopy()
	cluster.Spec.Taints = taints
	// The lock keeps taints others set meanwhile (cordon, users): a merge
	// patch replaces the whole list.
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if !apierrors.IsConflict(err) {
			r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonTaintClusterFailed, actionTaint,
				"Failed to update taints (%s): %v", describeTaintChange(added, removed), err)
		}
		return fmt.Errorf("updating taints: %w", err)
	}
	change := describeTaintChange(added, removed)
	ctrl.LoggerFrom(ctx).Info("Updated cluster taints", "change", change)
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, flotillaevents.ReasonTaintClusterSucceed, actionTaint, "Taints updated: %s", change)
	return nil
}

// reconcileDelete removes, in order, the member's Works, its execution
// namespace and then the finalizer, polling while the deletions complete.
// Works go first so that whoever executes them (the execution controller,
// with its own finalizer) sees them deleted while the member is still
// known.
func (r *Reconciler) reconcileDelete(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, clusterv1alpha1.ClusterControllerFinalizer) {
		r.forgetMember(cluster.Name)
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	ns := names.ExecutionSpace(cluster.Name)

	worksLeft, err := r.deleteWorks(ctx, ns)
	if err != nil {
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonRemoveExecutionSpaceFailed, actionRemoveExecutionSpace,
			"Failed to delete the Works in %s: %v", ns, err)
		return ctrl.Result{}, err
	}
	if worksLeft {
		log.V(1).Info("Waiting for the Works of the deleted cluster to go", "namespace", ns)
		return ctrl.Result{RequeueAfter: deletionPoll}, nil
	}

	gone, err := r.removeExecutionSpace(ctx, cluster, ns)
	if err != nil {
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonRemoveExecutionSpaceFailed, actionRemoveExecutionSpace,
			"Failed to delete execution namespace %s: %v", ns, err)
		return ctrl.Result{}, err
	}
	if !gone {
		log.V(1).Info("Waiting for the execution namespace to go", "namespace", ns)
		return ctrl.Result{RequeueAfter: deletionPoll}, nil
	}

	r.forgetMember(cluster.Name)
	base := cluster.DeepCopy()
	controllerutil.RemoveFinalizer(cluster, clusterv1alpha1.ClusterControllerFinalizer)
	if err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
	}
	log.Info("Released deleted cluster")
	return ctrl.Result{}, nil
}

// deleteWorks asks for every Work in the execution namespace to be deleted
// and reports whether any is still there.
func (r *Reconciler) deleteWorks(ctx context.Context, ns string) (bool, error) {
	var works workv1alpha1.WorkList
	if err := r.APIReader.List(ctx, &works, client.InNamespace(ns), client.Limit(1)); err != nil {
		return false, fmt.Errorf("listing Works in %s: %w", ns, err)
	}
	if len(works.Items) == 0 {
		return false, nil
	}
	if err := r.Client.DeleteAllOf(ctx, &workv1alpha1.Work{}, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
		return true, fmt.Errorf("deleting Works in %s: %w", ns, err)
	}
	return true, nil
}

// removeExecutionSpace deletes the execution namespace and reports whether it
// is gone.
func (r *Reconciler) removeExecutionSpace(ctx context.Context, cluster *clusterv1alpha1.Cluster, name string) (bool, error) {
	ns := namespaceMetadata()
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting execution namespace %s: %w", name, err)
	}
	if !ns.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if err := r.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("deleting execution namespace %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleting execution namespace", "namespace", name)
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, flotillaevents.ReasonRemoveExecutionSpaceSucceed, actionRemoveExecutionSpace,
		"Deleting execution namespace %s", name)
	return false, nil
}

// forgetMember drops what is kept in memory for a member that went away.
func (r *Reconciler) forgetMember(name string) {
	r.tracker.forget(name)
	r.leases.forget(name)
	r.Members.Forget(name)
	if r.Informers != nil {
		r.Informers.Stop(name)
	}
}

func namespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return ns
}
