package binding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionSyncWork      = "SyncWork"
	actionApplyOverride = "ApplyOverridePolicy"
	actionCleanupWork   = "CleanupWork"
)

// conflictRetry requeues after a write lost a race with another writer; the
// next attempt starts from the newer object.
const conflictRetry = 200 * time.Millisecond

func (r *Reconciler) reconcileResourceBinding(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return requeueOnConflict(ctx, r.reconcile(ctx, ViewOf(rb)))
}

func (r *Reconciler) reconcileClusterResourceBinding(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crb := &workv1alpha2.ClusterResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, crb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return requeueOnConflict(ctx, r.reconcile(ctx, ClusterViewOf(crb)))
}

// requeueOnConflict retries soon, without an error in the log, after a
// write lost a race.
func requeueOnConflict(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Lost a race writing; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// reconcile brings the Works of one binding in line with it.
func (r *Reconciler) reconcile(ctx context.Context, v View) error {
	if !v.Object.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, v)
	}
	if err := r.ensureFinalizerAndID(ctx, v); err != nil {
		return err
	}
	works, err := r.worksOf(ctx, v)
	if err != nil {
		return err
	}

	var s syncState
	r.removeOrphans(ctx, v, works, &s)

	if len(mergeRequiredBy(v.Spec.Clusters, v.Spec.RequiredBy)) == 0 {
		r.report(ctx, v, nil, &s)
		return s.retryable()
	}
	template, err := r.Templates.Get(ctx, v.Spec.Resource)
	if errors.Is(err, ErrTemplateGone) {
		// The binding goes with its template (garbage collection); its
		// Works go with it.
		ctrl.LoggerFrom(ctx).V(1).Info("Template is gone; waiting for the binding to go", "template", v.Spec.Resource)
		r.report(ctx, v, nil, &s)
		return s.retryable()
	}
	if err != nil {
		return err
	}
	r.syncWorks(ctx, v, template, &s)
	r.report(ctx, v, template, &s)
	return s.retryable()
}

// ensureFinalizerAndID adds the finalizer, so the Works are removed before
// the binding goes, and a permanent id when the binding has none (the
// detector or the webhook normally sets it), in one write.
func (r *Reconciler) ensureFinalizerAndID(ctx context.Context, v View) error {
	base := v.Object.DeepCopyObject().(client.Object)
	changed := controllerutil.AddFinalizer(v.Object, v.Finalizer())
	if v.ID() == "" {
		labels := v.Object.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v.IDLabel()] = string(uuid.NewUUID())
		v.Object.SetLabels(labels)
		changed = true
	}
	if !changed {
		return nil
	}
	// The lock keeps what others wrote meanwhile: a merge patch replaces
	// the whole finalizer list.
	if err := r.Client.Patch(ctx, v.Object, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding finalizer and id to %s: %w", v.Kind(), err)
	}
	return nil
}

// worksOf lists the Works carrying the binding's id, from the cache,
// without copies: they are only read and deleted.
func (r *Reconciler) worksOf(ctx context.Context, v View) ([]workv1alpha1.Work, error) {
	if v.ID() == "" {
		return nil, nil
	}
	var list workv1alpha1.WorkList
	if err := r.Client.List(ctx, &list, client.MatchingFields{WorkBindingIndex: v.IDLabel() + "=" + v.ID()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Works: %w", err)
	}
	return list.Items, nil
}

// syncState collects what one reconcile did, for its events and result.
type syncState struct {
	// written counts Works created, updated or deleted.
	written int
	// failures are per-cluster errors worth retrying.
	failures []error
	// userErrors are failures only a user can fix (override policies); they
	// are reported but not retried.
	userErrors []error
	// raced are writes that lost a race with the cache (a Work created or
	// changed since it was read): retried soon, not reported.
	raced []error
	// pending are Works waiting for an earlier deletion to finish; their
	// deletion event requeues the binding.
	pending int
}

// retryable is what the reconcile returns: the failures, else a lost race,
// which requeueOnConflict turns into a quick retry.
func (s *syncState) retryable() error {
	if len(s.failures) > 0 {
		return errors.Join(s.failures...)
	}
	if len(s.raced) > 0 {
		return s.raced[0]
	}
	return nil
}

// writeFailed files a failed Work write as a lost race or a failure.
func (s *syncState) writeFailed(err error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		s.raced = append(s.raced, err)
		return
	}
	s.failures = append(s.failures, err)
}

// removeOrphans deletes the Works of clusters where the binding no longer
// belongs.
func (r *Reconciler) removeOrphans(ctx context.Context, v View, works []workv1alpha1.Work, s *syncState) {
	keep := ExistingClusters(v.Spec)
	for i := range works {
		w := &works[i]
		if !orphan(w, keep) {
			continue
		}
		if err := r.deleteWork(ctx, w); err != nil {
			s.failures = append(s.failures, err)
			r.Recorder.Eventf(v.Object, nil, corev1.EventTypeWarning, flotillaevents.ReasonCleanupWorkFailed, actionCleanupWork,
				"Failed to delete Work %s/%s: %v", w.Namespace, w.Name, err)
			continue
		}
		s.written++
	}
}

// orphan tells whether a Work of the binding is in a cluster where the
// binding no longer belongs. Works outside execution namespaces are not
// ours to judge.
func orphan(w *workv1alpha1.Work, keep map[string]bool) bool {
	cluster, ok := names.ClusterOfExecutionSpace(w.Namespace)
	return ok && !keep[cluster] && w.DeletionTimestamp.IsZero()
}

func (r *Reconciler) deleteWork(ctx context.Context, w *workv1alpha1.Work) error {
	if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			// Another Work took the name; it is not this one to delete.
			return nil
		}
		return fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Deleted Work", "work", client.ObjectKeyFromObject(w))
	return nil
}

// syncWorks writes the Work of every target cluster.
func (r *Reconciler) syncWorks(ctx context.Context, v View, template *unstructured.Unstructured, s *syncState) {
	reviseEnabled := r.Interpreter.HookEnabled(template.GroupVersionKind(), reviseReplicaOp)
	targets := targetsFor(v.Spec, template, reviseEnabled)

	ops, err := r.overrideRenderer(ctx, template.GetNamespace())
	if err != nil {
		s.failures = append(s.failures, err)
		return
	}
	base := template.DeepCopy()
	prune(base)
	id := identity{
		bindingIDLabel:     v.IDLabel(),
		bindingID:          v.ID(),
		bindingAnnotations: v.WorkAnnotations(),
		templateUID:        string(template.GetUID()),
		templateGeneration: template.GetGeneration(),
		conflictResolution: v.Spec.ConflictResolution,
	}
	for _, t := range targets {
		r.syncCluster(ctx, v, template, base, ops, t, id, s)
	}
}

// syncCluster renders and writes the Work of one cluster.
func (r *Reconciler) syncCluster(ctx context.Context, v View, template, base *unstructured.Unstructured,
	ops overrideApplier, t target, id identity, s *syncState,
) {
	ref := v.Spec.Resource
	key := client.ObjectKey{Namespace: names.ExecutionSpace(t.cluster), Name: names.Work(ref.Namespace, ref.Name, ref.Kind)}
	// Read without a copy: most Works are up to date, and one is copied
	// before it is changed.
	existing := &workv1alpha1.Work{}
	found := true
	if err := r.Client.Get(ctx, key, existing, client.UnsafeDisableDeepCopy); err != nil {
		if !apierrors.IsNotFound(err) {
			s.failures = append(s.failures, fmt.Errorf("reading Work %s: %w", key, err))
			return
		}
		found = false
	}
	if found && !existing.DeletionTimestamp.IsZero() {
		// Recreated once gone: its deletion requeues the binding.
		s.pending++
		return
	}
	work := workIdentity{namespace: key.Namespace, name: key.Name}
	if found {
		work.id = existing.Labels[workv1alpha1.WorkPermanentIDLabel]
	}
	if work.id == "" {
		work.id = string(uuid.NewUUID())
	}

	cluster, err := r.cluster(ctx, t.cluster)
	if err != nil {
		s.failures = append(s.failures, err)
		return
	}
	if !cluster.DeletionTimestamp.IsZero() {
		// Nothing more goes to a cluster being deleted: the cluster
		// controller is removing its Works, and one written now would hold
		// the deletion up for as long as the binding names the cluster
		// (the scheduler takes it off).
		ctrl.LoggerFrom(ctx).V(1).Info("Target cluster is being deleted; not writing its Work", "cluster", t.cluster)
		return
	}
	if r.InjectPreservedState {
		t.labels = preservedState(v.Spec, t.cluster)
	}
	rd, err := render(ctx, r.Interpreter, ops, base, t, cluster, id, work)
	var oe *overrideError
	if errors.As(err, &oe) {
		s.userErrors = append(s.userErrors, fmt.Errorf("cluster %s: %w", t.cluster, err))
		r.Recorder.Eventf(template, nil, corev1.EventTypeWarning, flotillaevents.ReasonApplyOverridePolicyFailed, actionApplyOverride,
			"Failed to apply override policies for cluster %s: %v", t.cluster, oe.err)
		return
	}
	if err != nil {
		s.failures = append(s.failures, fmt.Errorf("rendering for cluster %s: %w", t.cluster, err))
		return
	}
	d, err := buildWork(v, rd, t, work)
	if err != nil {
		s.failures = append(s.failures, fmt.Errorf("cluster %s: %w", t.cluster, err))
		return
	}

	if !found {
		if err := r.Client.Create(ctx, d.newWork()); err != nil {
			s.writeFailed(fmt.Errorf("creating Work %s: %w", key, err))
			return
		}
	} else {
		same, err := d.upToDate(existing)
		if err != nil {
			s.failures = append(s.failures, fmt.Errorf("comparing Work %s: %w", key, err))
			return
		}
		if same {
			return
		}
		updated := existing.DeepCopy()
		if err := workcache.Expand(updated); err != nil {
			s.failures = append(s.failures, err)
			return
		}
		d.apply(updated)
		if err := r.Client.Update(ctx, updated); err != nil {
			s.writeFailed(fmt.Errorf("updating Work %s: %w", key, err))
			return
		}
	}
	s.written++
	ctrl.LoggerFrom(ctx).V(1).Info("Wrote Work", "work", key, "created", !found)
	if len(rd.matches) > 0 {
		r.Recorder.Eventf(template, nil, corev1.EventTypeNormal, flotillaevents.ReasonApplyOverridePolicySucceed, actionApplyOverride,
			"Applied override policies (%s) for cluster %s", describePolicies(rd.matches), t.cluster)
	}
}

// report records the outcome on the binding and its template: a failure
// every time, a success only when Works were written.
func (r *Reconciler) report(ctx context.Context, v View, template *unstructured.Unstructured, s *syncState) {
	if s.pending > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for Works being deleted before recreating them", "works", s.pending)
	}
	failed := slices.Concat(s.userErrors, s.failures)
	objects := []client.Object{v.Object}
	if template != nil {
		objects = append(objects, template)
	}
	switch {
	case len(failed) > 0:
		msg := errors.Join(failed...).Error()
		ctrl.LoggerFrom(ctx).Info("Failed to sync Works", "errors", strings.ReplaceAll(msg, "\n", "; "))
		for _, o := range objects {
			r.Recorder.Eventf(o, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncWorkFailed, actionSyncWork,
				"Failed to sync Works of %s %s: %s", v.Kind(), describeObject(v.Object), strings.ReplaceAll(msg, "\n", "; "))
		}
	case s.written > 0:
		for _, o := range objects {
			r.Recorder.Eventf(o, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncWorkSucceed, actionSyncWork,
				"Synced Works of %s %s", v.Kind(), describeObject(v.Object))
		}
	}
}

// reconcileDelete deletes the binding's Works, then releases its
// finalizer. The Works' own finalizer keeps them until the execution
// controller has removed their objects from the members.
func (r *Reconciler) reconcileDelete(ctx context.Context, v View) error {
	if !controllerutil.ContainsFinalizer(v.Object, v.Finalizer()) || r.wasReleased(v) {
		return nil
	}
	works, err := r.worksOf(ctx, v)
	if err != nil {
		return err
	}
	works = append(works, r.worksByName(ctx, v)...)
	var errs []error
	for i := range works {
		if !works[i].DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.deleteWork(ctx, &works[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		r.Recorder.Eventf(v.Object, nil, corev1.EventTypeWarning, flotillaevents.ReasonCleanupWorkFailed, actionCleanupWork,
			"Failed to delete Works: %v", strings.ReplaceAll(err.Error(), "\n", "; "))
		return err
	}
	base := v.Object.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(v.Object, v.Finalizer())
	if err := r.Client.Patch(ctx, v.Object, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			r.markReleased(v)
			return nil
		}
		return fmt.Errorf("removing finalizer: %w", err)
	}
	r.markReleased(v)
	ctrl.LoggerFrom(ctx).V(1).Info("Deleted Works and released the binding", "works", len(works))
	return nil
}

// releasedTTL is how long a released binding is remembered: longer than
// the cache lags behind the API server, even a saturated one.
const releasedTTL = 5 * time.Minute

// markReleased remembers that the binding's finalizer is gone. Its Works'
// deletion events requeue the binding while the cache may still show it
// deleting with the finalizer; without the record, each such reconcile
// would delete nothing and send the API server a finalizer removal for a
// binding already gone. No finalizer can be added to a deleting object, so
// a UID released once never needs releasing again.
func (r *Reconciler) markReleased(v View) {
	if r.released != nil {
		r.released.Set(v.Object.GetUID(), struct{}{}, releasedTTL)
	}
}

func (r *Reconciler) wasReleased(v View) bool {
	if r.released == nil {
		return false
	}
	_, ok := r.released.Get(v.Object.GetUID())
	return ok
}

// worksByName finds, by their names in the clusters the binding may be in,
// its Works that carry no id and so escape the index.
func (r *Reconciler) worksByName(ctx context.Context, v View) []workv1alpha1.Work {
	ref := v.Spec.Resource
	name := names.Work(ref.Namespace, ref.Name, ref.Kind)
	var out []workv1alpha1.Work
	for cluster := range ExistingClusters(v.Spec) {
		w := workv1alpha1.Work{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: name}, &w); err != nil {
			continue
		}
		if v.Owns(w.Labels, w.Annotations) && w.Labels[v.IDLabel()] == "" {
			out = append(out, w)
		}
	}
	return out
}

func describeObject(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
