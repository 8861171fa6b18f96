// Package clusterstatus is the cluster-status controller: for every Cluster
// of its sync mode that is not known to be down it reports, every period,
// the member's Kubernetes version, the APIs it serves (and whether that list
// is complete), and a summary of its nodes and of the resources they offer
// and pods request. Nodes and pods come from informers in the member, so a
// tick reads memory, not the member's API.
//
// The controller-manager runs it for Push members, whose Ready condition
// the cluster controller decides by probing them. An agent runs it for its
// own Pull member, which nobody outside can probe: there it also sets Ready,
// from whether the member answered (a flip once that has held for the
// agent's --cluster-success-threshold or --cluster-failure-threshold), and
// the control plane's cluster controller only overrides that when the
// agent's lease runs out.
package clusterstatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// ControllerName names the controller.
const ControllerName = "cluster-status-controller"

// Defaults of the Reconciler's settings.
const (
	DefaultPeriod  = 10 * time.Second
	DefaultTimeout = 10 * time.Second
)

const (
	// syncWait is how soon to look again while the member's informers are
	// still listing.
	syncWait = time.Second
	// conflictRetry requeues after the status patch lost a race with the
	// cluster controller's.
	conflictRetry = 200 * time.Millisecond
)

// Reconciler reports the status of member clusters. Set the exported fields,
// then call SetupWithManager.
type Reconciler struct {
	// SyncMode is the mode of the clusters it reports; in Pull mode it also
	// sets their Ready condition. Default: Push.
	SyncMode  clusterv1alpha1.ClusterSyncMode
	Client    client.Client
	Members   *membercluster.ClientCache
	Informers *membercluster.InformerManager
	// Period between two collections for a member. Default: DefaultPeriod.
	Period time.Duration
	// Timeout of each discovery call to a member. Default: DefaultTimeout.
	Timeout time.Duration
	// MaxConcurrentReconciles bounds the members collected at once.
	// Default: 5.
	MaxConcurrentReconciles int
	// Thresholds delay the flips of the Ready condition set in Pull mode;
	// zero durations follow every observation at once.
	Thresholds Thresholds
	// SkipResourceModeling leaves resourceSummary.allocatableModelings out
	// (karmada-agent's --enable-cluster-resource-modeling=false): grading
	// every node by its free resources is work a federation that does not
	// schedule by resource models can spare.
	SkipResourceModeling bool
	// RateLimiter, when set, paces the retries of the controller's work
	// queue; default: controller-runtime's.
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]

	readiness readiness
}

// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Members == nil || r.Informers == nil {
		return errors.New("cluster-status controller: Client, Members and Informers are required")
	}
	if r.Period <= 0 {
		r.Period = DefaultPeriod
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.SyncMode == "" {
		r.SyncMode = clusterv1alpha1.Push
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return relevantChange(e.ObjectOld, e.ObjectNew)
		}})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles, RateLimiter: r.RateLimiter}).
		Complete(r)
}

// relevantChange skips the Cluster updates this controller's own patches
// cause; the period brings it back anyway. A spec change, a deletion and a
// change of Ready (collect at once when a member comes back, stop when it
// goes) are acted on.
func relevantChange(oldObj, newObj client.Object) bool {
	oldC, okOld := oldObj.(*clusterv1alpha1.Cluster)
	newC, okNew := newObj.(*clusterv1alpha1.Cluster)
	if !okOld || !okNew {
		return true
	}
	return oldC.Generation != newC.Generation ||
		!oldC.DeletionTimestamp.Equal(newC.DeletionTimestamp) ||
		readyStatus(oldC) != readyStatus(newC)
}

func readyStatus(c *clusterv1alpha1.Cluster) metav1.ConditionStatus {
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		return cond.Status
	}
	return ""
}

// Reconcile collects one member's status and patches it if it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.stopInformers(req.Name)
			r.readiness.forget(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cluster: %w", err)
	}
	reportsReady := r.SyncMode == clusterv1alpha1.Pull
	switch {
	case membercluster.SyncModeOf(cluster) != r.SyncMode, !cluster.DeletionTimestamp.IsZero():
		// The other mode's controller reports this member; a leaving one
		// needs no more.
		r.stopInformers(cluster.Name)
		return ctrl.Result{}, nil
	case !reportsReady && (readyStatus(cluster) == metav1.ConditionFalse || readyStatus(cluster) == metav1.ConditionUnknown):
		// The last report stands while the member is down; informers that
		// cannot reach it would only retry. A change of Ready brings the
		// Cluster back here.
		r.stopInformers(cluster.Name)
		return ctrl.Result{RequeueAfter: r.Period}, nil
	}

	base := cluster.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(base.Status, cluster.Status) {
			return
		}
		// The lock keeps the cluster controller's Ready condition: a merge
		// patch replaces the whole conditions list.
		err := r.Client.Status().Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsConflict(err):
			ctrl.LoggerFrom(ctx).V(1).Info("Conflict patching Cluster status; retrying")
			res, retErr = ctrl.Result{RequeueAfter: conflictRetry}, nil
		case err != nil:
			retErr = errors.Join(retErr, fmt.Errorf("patching Cluster status: %w", err))
		}
	}()

	log := ctrl.LoggerFrom(ctx)
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		// The cluster controller reports this in Ready; retry on the period
		// rather than with a growing backoff, so a fixed Secret is picked up.
		log.Error(err, "Cannot collect cluster status")
		return ctrl.Result{RequeueAfter: r.Period}, nil
	}
	if err := r.collectVersion(ctx, clients, cluster); err != nil {
		// The member does not answer (the cluster controller will say so in
		// Ready, or this one in Pull mode); starting informers against it
		// would only add retries.
		log.Error(err, "Cannot collect the Kubernetes version")
		if reportsReady {
			r.setReady(ctx, cluster, false)
			r.stopInformers(cluster.Name)
		}
		return ctrl.Result{RequeueAfter: r.Period}, nil
	}
	if reportsReady {
		r.setReady(ctx, cluster, true)
	}
	if err := r.collectAPIEnablements(ctx, clients, cluster); err != nil {
		log.Error(err, "Cannot collect the API enablements")
	}
	synced, err := r.collectSummaries(ctx, cluster)
	if err != nil {
		log.Error(err, "Cannot collect the node and resource summaries")
	}
	if !synced {
		return ctrl.Result{RequeueAfter: min(syncWait, r.Period)}, nil
	}
	return ctrl.Result{RequeueAfter: r.Period}, nil
}

// setReady sets the Ready condition from whether the member answered,
// once that has held for its threshold.
func (r *Reconciler) setReady(ctx context.Context, cluster *clusterv1alpha1.Cluster, reachable bool) {
	now := time.Now()
	since, seen := r.readiness.observe(cluster.Name, cluster.UID, reachable, now)
	observed := ReadyCondition(reachable, cluster.Generation)
	stored := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	decided := decideReady(stored, observed, since, now, seen, r.Thresholds)
	if decided.Status != observed.Status {
		ctrl.LoggerFrom(ctx).V(1).Info("Keeping Ready until the observed health has held for its threshold",
			"ready", decided.Status, "observed", observed.Status, "since", since)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, decided)
}

// Messages of the Ready condition an agent sets, as Karmada words them.
const (
	msgReady        = "cluster is healthy and ready to accept workloads"
	msgNotReachable = "cluster is not reachable"
)

// ReadyCondition is the Ready condition of a Pull member whose agent could
// (or could not) reach its API server.
func ReadyCondition(reachable bool, generation int64) metav1.Condition {
	if reachable {
		return metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
			Reason: clusterv1alpha1.ClusterReasonReady, Message: msgReady, ObservedGeneration: generation}
	}
	return metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse,
		Reason: clusterv1alpha1.ClusterReasonNotReachable, Message: msgNotReachable, ObservedGeneration: generation}
}

func (r *Reconciler) collectVersion(ctx context.Context, clients *membercluster.Clients, cluster *clusterv1alpha1.Cluster) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	v, err := clients.Discovery.ServerVersionWithContext(ctx)
	if err != nil {
		return err
	}
	cluster.Status.KubernetesVersion = v.GitVersion
	return nil
}

// collectAPIEnablements lists the served APIs. A partial list (some
// aggregated API down) is published with CompleteAPIEnablements=False; a
// failure to list anything keeps the last report.
func (r *Reconciler) collectAPIEnablements(ctx context.Context, clients *membercluster.Clients, cluster *clusterv1alpha1.Cluster) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	_, lists, err := clients.Discovery.ServerGroupsAndResourcesWithContext(ctx)
	var partial error
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) {
			return err
		}
		partial = err
	}
	enablements := apiEnablements(lists)
	cluster.Status.APIEnablements = enablements
	meta.SetStatusCondition(&cluster.Status.Conditions, apiEnablementsCondition(enablements, partial, cluster.Generation))
	return nil
}

// collectSummaries fills nodeSummary and resourceSummary from the member's
// informers, started on first use. It reports false while they are still
// listing, leaving the last summaries in place.
func (r *Reconciler) collectSummaries(ctx context.Context, cluster *clusterv1alpha1.Cluster) (bool, error) {
	nodes, err := r.Informers.Informer(ctx, cluster.Name, nodesInformer, newNodeInformer)
	if err != nil {
		return false, err
	}
	pods, err := r.Informers.Informer(ctx, cluster.Name, podsInformer, newPodInformer)
	if err != nil {
		return false, err
	}
	if !nodes.HasSynced() || !pods.HasSynced() {
		return false, nil
	}
	nodeList := listNodes(nodes)
	cluster.Status.NodeSummary = nodeSummary(nodeList)
	models := cluster.Spec.ResourceModels
	if r.SkipResourceModeling {
		models = nil
	}
	cluster.Status.ResourceSummary = resourceSummary(models, nodeList, listPods(pods))
	return true, nil
}

func (r *Reconciler) stopInformers(cluster string) {
	r.Informers.StopInformer(cluster, nodesInformer)
	r.Informers.StopInformer(cluster, podsInformer)
}
