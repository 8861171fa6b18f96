// Package scheduler runs the scheduling loop: it feeds the cluster cache and
// the queue from informers, pops bindings, decides with package core
// against a snapshot, and writes the decision: spec.clusters with the
// applied-placement annotation first, then the status. Both writes carry
// the resourceVersion they were decided on, so a binding changed meanwhile
// is never overwritten with a stale decision; the change requeues it.
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/workloadgroups"
	"github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// IndexTargetCluster indexes bindings by the clusters in spec.clusters, to
// find those hit by a cluster deletion.
const IndexTargetCluster = "spec.clusters.name"

// eventAction is the action of the scheduler's events.
const eventAction = "Schedule"

// Options configures a Scheduler.
type Options struct {
	// SchedulerName selects the bindings to schedule (spec.schedulerName);
	// default "default-scheduler".
	SchedulerName string
	// Workers is how many bindings are scheduled concurrently; decisions
	// are cheap, so this mostly overlaps API writes. Default 16.
	Workers int
	// Queue tunes backoff and retries.
	Queue queue.Options
	// Plugins selects the plugins (--plugins); the zero value runs every
	// in-tree plugin.
	Plugins plugins.Selection
	// Estimators are consulted besides the general estimator.
	Estimators []estimator.Estimator
	// Recorder records events; nil records none.
	Recorder kevents.EventRecorder
	// TemplateEvents also records the scheduling events on the resource
	// template named by spec.resource.
	TemplateEvents bool
	// Clock is for tests; default the real clock.
	Clock clock.PassiveClock
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=get;patch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

// Scheduler is a manager runnable. It needs leader election: two
// schedulers writing the same bindings would fight.
type Scheduler struct {
	client    client.Client
	informers ctrlcache.Informers
	clusters  *cache.Cache
	queue     *queue.Queue
	algorithm *core.Algorithm
	recorder  kevents.EventRecorder
	name      string
	workers   int
	templates bool
	clock     clock.PassiveClock
	writes    *writeLog
	stats     counters
	framework *framework.Framework
	// groups finds the bindings of workload (anti-)affinity groups and
	// remembers our decisions for them until the informer has them.
	groups *workloadgroups.Tracker

	// refits are bindings queued because the clusters changed (see
	// Refit); a cycle of one of them writes only if its placement moves.
	refitMu sync.Mutex
	refits  map[queue.Key]struct{}
}

// Stats counts what the scheduler did since it was built.
type Stats struct {
	// Attempts is the number of scheduling decisions made.
	Attempts int64
	// Scheduled counts decisions written successfully.
	Scheduled int64
	// Unschedulable counts decisions that found no fit or no room.
	Unschedulable int64
	// Errors counts internal errors and failed writes.
	Errors int64
	// SpecWrites and StatusWrites count API writes.
	SpecWrites, StatusWrites int64
}

type counters struct {
	attempts, scheduled, unschedulable, errors, specWrites, statusWrites atomic.Int64
}

// Stats returns the counters; for tests, benchmarks and debugging.
func (s *Scheduler) Stats() Stats {
	return Stats{
		Attempts:      s.stats.attempts.Load(),
		Scheduled:     s.stats.scheduled.Load(),
		Unschedulable: s.stats.unschedulable.Load(),
		Errors:        s.stats.errors.Load(),
		SpecWrites:    s.stats.specWrites.Load(),
		StatusWrites:  s.stats.statusWrites.Load(),
	}
}

var (
	_ manager.Runnable               = &Scheduler{}
	_ manager.LeaderElectionRunnable = &Scheduler{}
)

// New builds a scheduler reading through c (a cache-backed client) and
// watching through informers.
func New(c client.Client, informers ctrlcache.Informers, opts Options) *Scheduler {
	if opts.SchedulerName == "" {
		opts.SchedulerName = policyv1alpha1.DefaultSchedulerName
	}
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	groups := workloadgroups.New(c)
	fw := plugins.NewFramework(opts.Plugins, plugins.Deps{Groups: groups})
	return &Scheduler{
		client:    c,
		informers: informers,
		clusters:  cache.New(),
		queue:     queue.New(opts.Queue),
		algorithm: core.NewAlgorithm(fw, opts.Estimators...),
		framework: fw,
		groups:    groups,
		recorder:  opts.Recorder,
		name:      opts.SchedulerName,
		workers:   opts.Workers,
		templates: opts.TemplateEvents,
		clock:     opts.Clock,
		writes:    &writeLog{stale: make(map[queue.Key][]string)},
		refits:    map[queue.Key]struct{}{},
	}
}

// SetupWithManager registers the binding indexes (target cluster,
// workload groups) and the scheduler with the manager.
func (s *Scheduler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := IndexBindings(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := workloadgroups.Index(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return mgr.Add(s)
}

// FilterPlugins names the filter plugins the scheduler runs, in order; for
// tests and the start-up log.
func (s *Scheduler) FilterPlugins() []string { return s.framework.FilterNames() }

// ScorePlugins names the score plugins the scheduler runs.
func (s *Scheduler) ScorePlugins() []string { return s.framework.ScoreNames() }

// IndexBindings adds IndexTargetCluster to both binding kinds.
func IndexBindings(ctx context.Context, indexer client.FieldIndexer) error {
	extract := func(obj client.Object) []string {
		b, ok := AsBinding(obj)
		if !ok {
			return nil
		}
		names := make([]string, len(b.Spec.Clusters))
		for i, tc := range b.Spec.Clusters {
			names[i] = tc.Name
		}
		return names
	}
	if err := indexer.IndexField(ctx, &workv1alpha2.ResourceBinding{}, IndexTargetCluster, extract); err != nil {
		return fmt.Errorf("indexing ResourceBindings by target cluster: %w", err)
	}
	if err := indexer.IndexField(ctx, &workv1alpha2.ClusterResourceBinding{}, IndexTargetCluster, extract); err != nil {
		return fmt.Errorf("indexing ClusterResourceBindings by target cluster: %w", err)
	}
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Start runs the loop until ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("scheduler").WithValues("schedulerName", s.name)
	ctx = ctrl.LoggerInto(ctx, log)

	clusterInformer, err := s.informers.GetInformer(ctx, &clusterv1alpha1.Cluster{})
	if err != nil {
		return fmt.Errorf("getting the Cluster informer: %w", err)
	}
	clusterReg, err := clusterInformer.AddEventHandler(s.clusterHandler(ctx))
	if err != nil {
		return fmt.Errorf("watching Clusters: %w", err)
	}
	defer func() { _ = clusterInformer.RemoveEventHandler(clusterReg) }()
	// Bindings are judged against the clusters (a target missing from the
	// cache reads as deleted), so the cache must be complete first.
	if !toolscache.WaitForCacheSync(ctx.Done(), clusterReg.HasSynced) {
		return fmt.Errorf("waiting for the Cluster cache: %w", ctx.Err())
	}

	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		inf, err := s.informers.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("getting the %T informer: %w", obj, err)
		}
		reg, err := inf.AddEventHandler(s.bindingHandler(ctx))
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		defer func() { _ = inf.RemoveEventHandler(reg) }()
	}

	log.Info("Starting scheduler", "workers", s.workers, "filters", s.FilterPlugins(), "scores", s.ScorePlugins())
	var wg sync.WaitGroup
	wg.Go(func() { s.queue.Run(ctx) })
	for range s.workers {
		wg.Go(func() { s.work(ctx) })
	}
	<-ctx.Done()
	wg.Wait()
	log.Info("Scheduler stopped")
	return nil
}

func (s *Scheduler) clusterHandler(ctx context.Context) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if c, ok := obj.(*clusterv1alpha1.Cluster); ok {
				s.clusters.AddOrUpdate(c)
				s.queue.MoveAllToActive()
				s.refitAffected(ctx, nil, c)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*clusterv1alpha1.Cluster)
			n, ok2 := newObj.(*clusterv1alpha1.Cluster)
			if !ok1 || !ok2 {
				return
			}
			s.clusters.AddOrUpdate(n)
			if ClusterChangeMayHelp(o, n) {
				s.queue.MoveAllToActive()
			}
			if ClusterFitMayChange(o, n) {
				s.refitAffected(ctx, o, n)
			}
			if o.DeletionTimestamp == nil && n.DeletionTimestamp != nil {
				// Divided bindings too: Evaluate reschedules them off a
				// cluster being deleted.
				s.requeueTargeting(ctx, n.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			c, ok := obj.(*clusterv1alpha1.Cluster)
			if !ok {
				return
			}
			s.clusters.Delete(c.Name)
			s.requeueTargeting(ctx, c.Name)
		},
	}
}

// refitAffected queues every binding of this scheduler that follows
// cluster changes (Refit) and that the change of one cluster, seen before
// and after, may move (AffectedBy). The informer cache answers the lists; a
// binding whose placement does not move costs a filter pass and no write.
func (s *Scheduler) refitAffected(ctx context.Context, before, after *clusterv1alpha1.Cluster) {
	log := ctrl.LoggerFrom(ctx)
	var rbs workv1alpha2.ResourceBindingList
	if err := s.client.List(ctx, &rbs, client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "Listing ResourceBindings to follow a cluster change")
	}
	var crbs workv1alpha2.ClusterResourceBindingList
	if err := s.client.List(ctx, &crbs, client.UnsafeDisableDeepCopy); err != nil {
		log.Error(err, "Listing ClusterResourceBindings to follow a cluster change")
	}
	bindings := make([]Binding, 0, len(rbs.Items)+len(crbs.Items))
	for i := range rbs.Items {
		bindings = append(bindings, Binding{Object: &rbs.Items[i], Spec: &rbs.Items[i].Spec, Status: &rbs.Items[i].Status})
	}
	for i := range crbs.Items {
		bindings = append(bindings, Binding{Object: &crbs.Items[i], Spec: &crbs.Items[i].Spec, Status: &crbs.Items[i].Status})
	}
	s.refitMu.Lock()
	defer s.refitMu.Unlock()
	for _, b := range bindings {
		if b.SchedulerName() != s.name || !Refit(b) || !AffectedBy(b, before, after) {
			continue
		}
		s.refits[b.Key()] = struct{}{}
		s.queue.Add(b.Key(), b.Priority())
	}
}

// markRefit asks for a refit of key in its next cycle.
func (s *Scheduler) markRefit(key queue.Key) {
	s.refitMu.Lock()
	defer s.refitMu.Unlock()
	s.refits[key] = struct{}{}
}

// refitPending reports whether key waits for a refit.
func (s *Scheduler) refitPending(key queue.Key) bool {
	s.refitMu.Lock()
	defer s.refitMu.Unlock()
	_, ok := s.refits[key]
	return ok
}

// takeRefit reports whether key was queued by refitAffected, and forgets it.
func (s *Scheduler) takeRefit(key queue.Key) bool {
	s.refitMu.Lock()
	defer s.refitMu.Unlock()
	_, ok := s.refits[key]
	delete(s.refits, key)
	return ok
}

// requeueTargeting queues our bindings that have replicas in a deleted
// cluster.
func (s *Scheduler) requeueTargeting(ctx context.Context, cluster string) {
	log := ctrl.LoggerFrom(ctx)
	var rbs workv1alpha2.ResourceBindingList
	if err := s.client.List(ctx, &rbs, client.MatchingFields{IndexTargetCluster: cluster}); err != nil {
		log.Error(err, "Listing ResourceBindings of a deleted cluster", "cluster", cluster)
	}
	for i := range rbs.Items {
		s.enqueue(Binding{Object: &rbs.Items[i], Spec: &rbs.Items[i].Spec, Status: &rbs.Items[i].Status})
	}
	var crbs workv1alpha2.ClusterResourceBindingList
	if err := s.client.List(ctx, &crbs, client.MatchingFields{IndexTargetCluster: cluster}); err != nil {
		log.Error(err, "Listing ClusterResourceBindings of a deleted cluster", "cluster", cluster)
	}
	for i := range crbs.Items {
		s.enqueue(Binding{Object: &crbs.Items[i], Spec: &crbs.Items[i].Spec, Status: &crbs.Items[i].Status})
	}
}

func (s *Scheduler) bindingHandler(ctx context.Context) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if b, ok := AsBinding(obj); ok {
				s.onBinding(b)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if b, ok := AsBinding(newObj); ok {
				s.onBinding(b)
			}
			o, ok1 := oldObj.(*workv1alpha2.ResourceBinding)
			n, ok2 := newObj.(*workv1alpha2.ResourceBinding)
			if ok1 && ok2 && GroupPlacementChanged(o, n) {
				// An added binding needs no such step: whatever failed
				// before it (at start-up, every failed binding) is queued
				// anyway, and it holds no cluster until it is scheduled.
				s.retryGroups(ctx, n)
				if !equality.Semantic.DeepEqual(o.Spec.WorkloadAffinityGroups, n.Spec.WorkloadAffinityGroups) {
					s.retryGroups(ctx, o)
				}
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if b, ok := AsBinding(obj); ok {
				s.queue.Delete(b.Key())
				s.writes.forget(b.Key())
				s.takeRefit(b.Key())
			}
			if rb, ok := obj.(*workv1alpha2.ResourceBinding); ok {
				s.groups.Forget(rb.Namespace, rb.Name)
				s.retryGroups(ctx, rb)
			}
		},
	}
}

func (s *Scheduler) onBinding(b Binding) {
	key := b.Key()
	s.writes.observe(key, b.Object.GetResourceVersion())
	if rb, ok := b.Object.(*workv1alpha2.ResourceBinding); ok {
		s.groups.Observe(rb)
	}
	if b.SchedulerName() != s.name {
		s.queue.Delete(key)
		s.takeRefit(key)
		return
	}
	// A pending refit is queued again too: its cycle may have been skipped
	// while our own write was on its way to the cache.
	if Evaluate(b, s.targetState).Action != Nothing || s.refitPending(key) {
		s.queue.Add(key, b.Priority())
	}
}

// targetState tells Evaluate what the cache knows of a cluster.
func (s *Scheduler) targetState(name string) TargetState {
	info, ok := s.clusters.Get(name)
	switch {
	case !ok:
		return TargetGone
	case info.Cluster.DeletionTimestamp != nil:
		return TargetDeleting
	}
	return TargetPresent
}

func (s *Scheduler) enqueue(b Binding) {
	if b.SchedulerName() == s.name {
		s.queue.Add(b.Key(), b.Priority())
	}
}

func (s *Scheduler) work(ctx context.Context) {
	for {
		key, ok := s.queue.Pop(ctx)
		if !ok {
			return
		}
		s.queue.Done(key, s.scheduleOne(ctx, key))
	}
}

// scheduleOne is one scheduling cycle of one binding.
func (s *Scheduler) scheduleOne(ctx context.Context, key queue.Key) queue.Outcome {
	log := ctrl.LoggerFrom(ctx).WithValues("binding", key.String())
	ctx = ctrl.LoggerInto(ctx, log)

	obj := newObject(key)
	if err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return queue.Done
		}
		log.Error(err, "Reading binding")
		return queue.Failed
	}
	b, _ := AsBinding(obj)
	if b.SchedulerName() != s.name {
		return queue.Done
	}
	if s.writes.isStale(key, obj.GetResourceVersion()) {
		// Our own write has not reached the cache yet; its event requeues
		// the binding if there is anything left to do.
		return queue.Done
	}
	// Bindings of one workload group are decided one at a time, each
	// seeing the ones before it: the hold ends once the spec write is
	// recorded (specWritten), or with the cycle. Other bindings go on in
	// parallel.
	release := sync.OnceFunc(s.groups.Lock(obj.GetNamespace(), b.Spec.WorkloadAffinityGroups))
	defer release()
	ctx = context.WithValue(ctx, groupHoldKey{}, release)

	refit := s.takeRefit(key)
	trigger := Evaluate(b, s.targetState)
	if refit && trigger.Action != Schedule && Refit(b) {
		outcome, wrote := s.refit(ctx, b)
		if outcome == queue.Failed {
			// A write failed (a conflict, most often: the controllers
			// update bindings all the time); the retry must refit again,
			// which Evaluate alone would not ask for.
			s.markRefit(key)
		}
		if wrote {
			return outcome
		}
	}
	switch trigger.Action {
	case Nothing:
		return queue.Done
	case ObserveGeneration:
		old := currentStatus(b.Status)
		next := old
		next.observedGeneration = obj.GetGeneration()
		if _, err := s.writeStatus(ctx, b, old, next, obj.GetResourceVersion()); err != nil {
			return s.writeFailed(ctx, err)
		}
		return queue.Done
	}

	log.V(1).Info("Scheduling binding", "reason", trigger.Reason, "fresh", trigger.Fresh)
	s.stats.attempts.Add(1)
	decision, err := s.algorithm.Schedule(ctx, s.clusters.Snapshot(), core.Input{
		Spec:                 b.Spec,
		ObservedAffinityName: b.Status.SchedulerObservedAffinityName,
		Fresh:                trigger.Fresh,
		Namespace:            obj.GetNamespace(),
		Name:                 obj.GetName(),
	})
	if err != nil {
		var fit *framework.FitError
		if remaining := s.presentTargets(b.Spec.Clusters); errors.As(err, &fit) && len(remaining) != len(b.Spec.Clusters) {
			// As in Karmada, a binding that fits nowhere else still leaves
			// the clusters deleted or being deleted: keeping them would have
			// their Works written again while the cluster leaves.
			log.V(1).Info("No cluster fits the binding; removing it from the clusters that are leaving", "reason", err.Error())
			return s.recordNoFit(ctx, b, err, remaining)
		}
		return s.recordFailure(ctx, b, err)
	}
	return s.recordSuccess(ctx, b, decision)
}

// presentTargets are the targets whose cluster exists and is not being
// deleted.
func (s *Scheduler) presentTargets(targets []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for _, tc := range targets {
		if s.targetState(tc.Name) == TargetPresent {
			out = append(out, tc)
		}
	}
	return out
}

// refit places a scheduled binding again after a cluster change, as
// Karmada reschedules Duplicated and replica-less bindings on every
// ClusterChanged event. Only a different outcome is written, so wrote is
// false when the binding stays as it is. When no cluster fits any more the
// binding leaves every cluster, as in Karmada: its clusters were taken away
// by the user (labels, fields), not by a fault, since taints never remove
// a current cluster. Other failures keep the placement and say so in the
// condition.
func (s *Scheduler) refit(ctx context.Context, b Binding) (outcome queue.Outcome, wrote bool) {
	log := ctrl.LoggerFrom(ctx)
	s.stats.attempts.Add(1)
	decision, err := s.algorithm.Schedule(ctx, s.clusters.Snapshot(), core.Input{
		Spec:                 b.Spec,
		ObservedAffinityName: b.Status.SchedulerObservedAffinityName,
		Namespace:            b.Object.GetNamespace(),
		Name:                 b.Object.GetName(),
	})
	var fit *framework.FitError
	switch {
	case errors.As(err, &fit):
		log.V(1).Info("No cluster fits the binding after a cluster change; removing it from all", "reason", err.Error())
		return s.recordNoFit(ctx, b, err, nil), true
	case err != nil:
		return s.recordFailure(ctx, b, err), true
	case equality.Semantic.DeepEqual(normalizeTargets(b.Spec.Clusters), normalizeTargets(decision.Clusters)) &&
		decision.AffinityName == b.Status.SchedulerObservedAffinityName:
		return queue.Done, false
	}
	log.V(1).Info("Placing binding again after a cluster change")
	return s.recordSuccess(ctx, b, decision), true
}

// recordNoFit sets spec.clusters to keep (empty: the binding leaves every
// cluster), then records the failure.
func (s *Scheduler) recordNoFit(ctx context.Context, b Binding, schedErr error, keep []workv1alpha2.TargetCluster) queue.Outcome {
	placement, err := json.Marshal(b.Spec.Placement)
	if err != nil {
		return s.recordFailure(ctx, b, fmt.Errorf("encoding the placement: %w", err))
	}
	patch, err := buildSpecPatch(b, keep, string(placement))
	if err != nil {
		return s.recordFailure(ctx, b, fmt.Errorf("encoding the schedule: %w", err))
	}
	generation, rv := b.Object.GetGeneration(), b.Object.GetResourceVersion()
	if patch != nil {
		target := newObject(b.Key())
		if err := s.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return s.writeFailed(ctx, err)
		}
		s.stats.specWrites.Add(1)
		s.writes.add(b.Key(), rv)
		generation, rv = target.GetGeneration(), target.GetResourceVersion()
		s.specWritten(ctx, b, rv, keep)
	}
	return s.recordFailureAt(ctx, b, schedErr, generation, rv)
}

func (s *Scheduler) recordSuccess(ctx context.Context, b Binding, d core.Decision) queue.Outcome {
	log := ctrl.LoggerFrom(ctx)
	key := b.Key()
	placement, err := json.Marshal(b.Spec.Placement)
	if err != nil {
		return s.recordFailure(ctx, b, fmt.Errorf("encoding the placement: %w", err))
	}
	generation, rv := b.Object.GetGeneration(), b.Object.GetResourceVersion()
	patch, err := buildSpecPatch(b, d.Clusters, string(placement))
	if err != nil {
		return s.recordFailure(ctx, b, fmt.Errorf("encoding the schedule: %w", err))
	}
	if patch != nil {
		target := newObject(key)
		if err := s.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			if federatedquota.IsExceeded(err) {
				// The webhook refused the placement as over a
				// FederatedResourceQuota: the binding keeps its clusters,
				// says why in its condition, and is tried again with
				// backoff, so it is placed once the quota has room.
				return s.recordFailure(ctx, b, err)
			}
			return s.writeFailed(ctx, err)
		}
		s.stats.specWrites.Add(1)
		s.writes.add(key, rv)
		generation, rv = target.GetGeneration(), target.GetResourceVersion()
		s.specWritten(ctx, b, rv, d.Clusters)
	}

	old := currentStatus(b.Status)
	scheduledAt := laterOf(metav1.NewTime(s.clock.Now()), b.Spec.RescheduleTriggeredAt)
	next := statusFields{
		observedGeneration: generation,
		affinityName:       d.AffinityName,
		lastScheduledTime:  &scheduledAt,
		conditions:         withCondition(old.conditions, conditionFor(nil, generation)),
	}
	if _, err := s.writeStatus(ctx, b, old, next, rv); err != nil {
		// spec.clusters is written but the status is not: the binding
		// reads as not scheduled, so the retry only completes the status.
		return s.writeFailed(ctx, err)
	}
	log.V(1).Info("Scheduled binding", "clusters", describeTargets(d.Clusters), "affinity", d.AffinityName)
	s.stats.scheduled.Add(1)
	s.event(b, corev1.EventTypeNormal, events.ReasonScheduleBindingSucceed, "%s Result: %s.", MessageScheduled, describeTargets(d.Clusters))
	return queue.Done
}

// recordFailure keeps spec.clusters as it is (a failed decision never
// removes a running workload; only recordNoFit does, for a binding whose
// clusters all stopped matching or are leaving) and reports the failure in
// the Scheduled condition.
func (s *Scheduler) recordFailure(ctx context.Context, b Binding, schedErr error) queue.Outcome {
	return s.recordFailureAt(ctx, b, schedErr, b.Object.GetGeneration(), b.Object.GetResourceVersion())
}

// recordFailureAt is recordFailure for a binding at generation and
// resourceVersion rv, which a spec write of this cycle may have moved.
func (s *Scheduler) recordFailureAt(ctx context.Context, b Binding, schedErr error, generation int64, rv string) queue.Outcome {
	log := ctrl.LoggerFrom(ctx)
	outcome := queue.Failed
	if core.IsUnschedulable(schedErr) {
		outcome = queue.Unschedulable
		s.stats.unschedulable.Add(1)
		log.V(1).Info("Binding is unschedulable", "reason", schedErr.Error())
	} else {
		s.stats.errors.Add(1)
		log.Error(schedErr, "Scheduling binding failed")
	}
	old := currentStatus(b.Status)
	next := old
	next.conditions = withCondition(old.conditions, conditionFor(schedErr, generation))
	wrote, err := s.writeStatus(ctx, b, old, next, rv)
	if err != nil {
		return s.writeFailed(ctx, err)
	}
	if wrote {
		s.event(b, corev1.EventTypeWarning, events.ReasonScheduleBindingFailed, "%s", schedErr.Error())
	}
	return outcome
}

// writeStatus patches the scheduler's status fields if they change.
func (s *Scheduler) writeStatus(ctx context.Context, b Binding, old, next statusFields, rv string) (bool, error) {
	patch, err := buildStatusPatch(old, next, rv)
	if err != nil || patch == nil {
		return false, err
	}
	key := b.Key()
	target := newObject(key)
	if err := s.client.Status().Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return false, err
	}
	s.stats.statusWrites.Add(1)
	s.writes.add(key, rv)
	return true, nil
}

// writeFailed classifies an API write error: a conflict means the binding
// changed under us (its event requeues it), a missing binding needs
// nothing, anything else is retried with backoff.
func (s *Scheduler) writeFailed(ctx context.Context, err error) queue.Outcome {
	log := ctrl.LoggerFrom(ctx)
	if apierrors.IsNotFound(err) {
		return queue.Done
	}
	s.stats.errors.Add(1)
	switch {
	case apierrors.IsConflict(err):
		log.V(1).Info("Binding changed while scheduling; retrying", "error", err.Error())
	default:
		log.Error(err, "Writing the schedule")
	}
	return queue.Failed
}

func (s *Scheduler) event(b Binding, eventType, reason, note string, args ...any) {
	if s.recorder == nil {
		return
	}
	s.recorder.Eventf(b.Object, nil, eventType, reason, eventAction, note, args...)
	if s.templates {
		if t := templateOf(b.Spec); t != nil {
			s.recorder.Eventf(t, b.Object, eventType, reason, eventAction, note, args...)
		}
	}
}

// templateOf references the template for events, without reading it: the
// scheduler has no business watching every kind.
func templateOf(spec *workv1alpha2.ResourceBindingSpec) runtime.Object {
	r := spec.Resource
	if r.Kind == "" || r.Name == "" || r.APIVersion == "" {
		return nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: r.APIVersion, Kind: r.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion},
	}
}

func newObject(key queue.Key) client.Object {
	if key.Namespace == "" {
		return &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: key.Name}}
	}
	return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
}

// writeLog remembers resourceVersions our own writes superseded, so a
// worker reading the informer cache before the write's event arrived does
// not decide again on the old object (which would only end in a conflict).
type writeLog struct {
	mu    sync.Mutex
	stale map[queue.Key][]string
}

func (w *writeLog) add(key queue.Key, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stale[key] = append(w.stale[key], rv)
}

func (w *writeLog) isStale(key queue.Key, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.stale[key], rv)
}

// observe is called with every version the informer delivers: once one
// newer than our writes arrives, the cache has caught up.
func (w *writeLog) observe(key queue.Key, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if list, ok := w.stale[key]; ok && !slices.Contains(list, rv) {
		delete(w.stale, key)
	}
}

func (w *writeLog) forget(key queue.Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.stale, key)
}

// groupHoldKey keys the release of the cycle's workload group hold in its
// context.
type groupHoldKey struct{}

// specWritten tells the workload groups about a spec.clusters written at
// resourceVersion rv, for the group's next decision, which may come before
// the informer delivers the write, and lets that decision start: the
// status write that follows concerns no one else.
func (s *Scheduler) specWritten(ctx context.Context, b Binding, rv string, clusters []workv1alpha2.TargetCluster) {
	if rb, ok := b.Object.(*workv1alpha2.ResourceBinding); ok {
		s.groups.Written(rb, rv, clusters)
	}
	if release, ok := ctx.Value(groupHoldKey{}).(func()); ok {
		release()
	}
}

// retryGroups requeues the unschedulable bindings of rb's workload groups:
// a member of the group was placed, moved, left the group or was deleted,
// which may let them fit now. Without it they would wait for a cluster
// change or the unschedulable timeout.
func (s *Scheduler) retryGroups(ctx context.Context, rb *workv1alpha2.ResourceBinding) {
	if rb.Spec.WorkloadAffinityGroups == nil {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	for _, kind := range []framework.GroupKind{framework.AffinityGroup, framework.AntiAffinityGroup} {
		group := workloadgroups.GroupOf(rb.Spec.WorkloadAffinityGroups, kind)
		if group == "" {
			continue
		}
		index := workloadgroups.IndexAffinityGroup
		if kind == framework.AntiAffinityGroup {
			index = workloadgroups.IndexAntiAffinityGroup
		}
		var list workv1alpha2.ResourceBindingList
		if err := s.client.List(ctx, &list, client.InNamespace(rb.Namespace), client.MatchingFields{index: group}, client.UnsafeDisableDeepCopy); err != nil {
			log.Error(err, "Listing the bindings of a workload group", "kind", kind.String(), "namespace", rb.Namespace, "group", group)
			continue
		}
		for i := range list.Items {
			peer := &list.Items[i]
			b := Binding{Object: peer, Spec: &peer.Spec, Status: &peer.Status}
			if peer.Name == rb.Name || b.SchedulerName() != s.name {
				continue
			}
			if s.queue.Unschedulable(b.Key()) || failedToFit(peer.Status.Conditions) {
				log.V(1).Info("Retrying a binding of a workload group that changed", "binding", b.Key().String(), "kind", kind.String(), "group", group)
				s.queue.Add(b.Key(), b.Priority())
			}
		}
	}
}

// failedToFit reports whether the Scheduled condition says the last
// attempt found no fit; the queue may not know yet (the attempt is still
// finishing) or any more (a restart).
func failedToFit(conditions []metav1.Condition) bool {
	c := meta.FindStatusCondition(conditions, workv1alpha2.Scheduled)
	return c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == workv1alpha2.BindingReasonNoClusterFit || c.Reason == workv1alpha2.BindingReasonUnschedulable)
}

// GroupPlacementChanged reports whether an update of a ResourceBinding
// changes what its workload groups see: its clusters or its groups.
func GroupPlacementChanged(o, n *workv1alpha2.ResourceBinding) bool {
	if o.Spec.WorkloadAffinityGroups == nil && n.Spec.WorkloadAffinityGroups == nil {
		return false
	}
	if !equality.Semantic.DeepEqual(o.Spec.WorkloadAffinityGroups, n.Spec.WorkloadAffinityGroups) {
		return true
	}
	return !slices.Equal(targetNamesOf(o.Spec.Clusters), targetNamesOf(n.Spec.Clusters))
}

func targetNamesOf(t []workv1alpha2.TargetCluster) []string {
	names := make([]string, len(t))
	for i, tc := range t {
		names[i] = tc.Name
	}
	slices.Sort(names)
	return names
}
