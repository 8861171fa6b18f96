package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/manifeststatus"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ReasonResourceConflict is the reason of Applied=False when a member
// object of a manifest's name exists that the federation does not manage
// (conflictResolution abort). Other failures use
// workv1alpha1.WorkReasonAppliedFailed.
const ReasonResourceConflict = workv1alpha1.WorkReasonResourceConflict

// Messages of the Work conditions, as Karmada words them.
const (
	messageApplied     = "Manifest has been successfully applied"
	messageDispatching = "Work is being dispatched to member clusters."
	messageSuspended   = "Work dispatching is in a suspended state."
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionSync     = "Sync"
	actionDispatch = "Dispatch"
)

// Bounds of messages that join per-manifest errors: the Applied
// condition's, and an event note's (events.k8s.io refuses notes of 1 kB or
// more).
const (
	maxMessage = 2048
	maxNote    = 900
)

// record sets the Applied condition from the manifests' results, emits the
// events, and says when to come back: failures to write are retried with
// backoff, a conflict or an object being deleted after a while.
func (r *Reconciler) record(ctx context.Context, work *workv1alpha1.Work, results []manifestResult) (ctrl.Result, error) {
	cluster, _ := names.ClusterOfExecutionSpace(work.Namespace)
	var (
		failures             = make([]error, 0, len(results))
		conflicts, retryable int
		written              bool
	)
	for _, res := range results {
		var conflict *ConflictError
		switch {
		case res.err == nil:
			written = written || res.written
			continue
		case errors.As(res.err, &conflict):
			conflicts++
		case !errors.Is(res.err, errTerminating):
			retryable++
		}
		failures = append(failures, res.err)
	}

	r.recordTemplates(work, cluster, results)
	r.addFirstEntries(ctx, work, results)
	if len(failures) == 0 {
		changed := r.setApplied(work, metav1.ConditionTrue, workv1alpha1.WorkReasonAppliedSuccessful, messageApplied)
		if written || changed {
			// A no-op reconcile emits nothing.
			r.Recorder.Eventf(work, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncSucceed, actionSync,
				"Successfully applied the manifests to cluster %s", cluster)
		}
		return ctrl.Result{}, nil
	}

	reason := workv1alpha1.WorkReasonAppliedFailed
	if conflicts == len(failures) {
		reason = ReasonResourceConflict
	}
	joined := errors.Join(failures...)
	r.setApplied(work, metav1.ConditionFalse, reason, truncate(joined.Error(), maxMessage))
	r.Recorder.Eventf(work, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncFailed, actionSync,
		"Failed to apply the manifests to cluster %s: %s", cluster, truncate(joined.Error(), maxNote))
	switch {
	case retryable > 0:
		return ctrl.Result{}, fmt.Errorf("applying Work %s/%s: %w", work.Namespace, work.Name, joined)
	case conflicts > 0:
		ctrl.LoggerFrom(ctx).Info("Not taking over member objects the Work does not manage", "error", joined.Error())
		return ctrl.Result{RequeueAfter: conflictRecheck}, nil
	}
	return ctrl.Result{RequeueAfter: terminatingRecheck}, nil
}

// addFirstEntries gives manifestStatuses an entry for each manifest whose
// member object the reconcile holds and that has none yet, so that a new
// Work's status is written once, with Applied, rather than a second time by
// the work-status controller, which keeps existing entries current.
func (r *Reconciler) addFirstEntries(ctx context.Context, work *workv1alpha1.Work, results []manifestResult) {
	for _, res := range results {
		if res.object == nil || res.target == nil || !ManagedBy(res.object, work) {
			continue
		}
		id := res.target.Identifier()
		if manifeststatus.Previous(work.Status.ManifestStatuses, id) != nil {
			continue
		}
		ms, err := r.reflector.Reflect(ctx, work, id, res.target, res.object)
		if err != nil {
			// The work-status controller retries and reports it again.
			ctrl.LoggerFrom(ctx).Info("Interpreting the member object", "error", err.Error())
		}
		work.Status.ManifestStatuses = append(work.Status.ManifestStatuses, ms)
	}
}

// recordTemplates emits, on the template of each manifest, SyncSucceed when
// it was written to the member and SyncFailed when it failed.
func (r *Reconciler) recordTemplates(work *workv1alpha1.Work, cluster string, results []manifestResult) {
	for _, res := range results {
		if res.target == nil || (res.err == nil && !res.written) {
			continue
		}
		tpl := templateOf(res.target)
		if tpl == nil {
			continue
		}
		if res.err != nil {
			r.Recorder.Eventf(tpl, work, corev1.EventTypeWarning, flotillaevents.ReasonSyncFailed, actionSync,
				"Failed to apply to cluster %s: %s", cluster, truncate(res.err.Error(), maxNote))
			continue
		}
		r.Recorder.Eventf(tpl, work, corev1.EventTypeNormal, flotillaevents.ReasonSyncSucceed, actionSync,
			"Successfully applied %s to cluster %s", res.target, cluster)
	}
}

// setApplied sets the Applied condition and reports whether it changed.
func (r *Reconciler) setApplied(work *workv1alpha1.Work, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{
		Type:               workv1alpha1.WorkApplied,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: work.Generation,
	})
}

// reconcileDispatching sets the Dispatching condition from
// spec.suspendDispatching, with a WorkDispatching event whenever its status
// is new, as Karmada records it: when it first becomes True ("Work is being
// dispatched to member clusters."), and on suspension and resumption. It
// reports whether dispatching is suspended.
func (r *Reconciler) reconcileDispatching(work *workv1alpha1.Work) bool {
	suspended := ptr.Deref(work.Spec.SuspendDispatching, false)
	cond := dispatchingCondition(suspended, work.Generation)
	prev := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkDispatching)
	changed := prev == nil || prev.Status != cond.Status
	meta.SetStatusCondition(&work.Status.Conditions, cond)
	if changed {
		r.Recorder.Eventf(work, nil, corev1.EventTypeNormal, flotillaevents.ReasonWorkDispatching, actionDispatch, "%s", cond.Message)
	}
	return suspended
}

// dispatchingCondition is the Dispatching condition of a Work, as Karmada
// sets it.
func dispatchingCondition(suspended bool, generation int64) metav1.Condition {
	if suspended {
		return metav1.Condition{
			Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionFalse,
			Reason: workv1alpha1.WorkReasonSuspendDispatching, Message: messageSuspended, ObservedGeneration: generation,
		}
	}
	return metav1.Condition{
		Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkReasonDispatching, Message: messageDispatching, ObservedGeneration: generation,
	}
}

// templateOf refers to the resource template a manifest was rendered from,
// known by the uid the binding controller records on the manifest; the
// template has the manifest's kind, namespace and name. Nil for a manifest
// that came from no template.
func templateOf(t *Target) *metav1.PartialObjectMetadata {
	uid := t.Desired.GetAnnotations()[workv1alpha1.ResourceTemplateUIDAnnotation]
	if uid == "" {
		return nil
	}
	tpl := &metav1.PartialObjectMetadata{}
	tpl.SetGroupVersionKind(t.Desired.GroupVersionKind())
	tpl.SetNamespace(t.Desired.GetNamespace())
	tpl.SetName(t.Desired.GetName())
	tpl.SetUID(types.UID(uid))
	return tpl
}

// truncate cuts s to at most limit bytes, marking the cut.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// utf8Start: b begins a UTF-8 sequence, so cutting before it keeps the
// string valid.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
