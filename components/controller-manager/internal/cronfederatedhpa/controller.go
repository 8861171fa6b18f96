// Package cronfederatedhpa is Karmada's cronfederatedhpa-controller: each
// rule of a CronFederatedHPA, at the times its cron schedule names in its
// time zone, sets the minReplicas and maxReplicas of the FederatedHPA it
// targets, or the replicas of the workload it targets through the
// workload's scale subresource; status.executionHistories records, per
// rule, the next execution and the latest successful and failed ones.
//
// As with Karmada's executors, a rule's schedule starts when the controller
// first sees the rule (or sees it changed): times missed while the
// controller was not running are not caught up.
package cronfederatedhpa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "cronfederatedhpa-controller"

// Karmada's event reasons of the controller, all Warnings.
const (
	ReasonStartRuleFailed              = "StartRuleFailed"
	ReasonScaleFailed                  = "ScaleFailed"
	ReasonUpdateStatusFailed           = "UpdateStatusFailed"
	ReasonUpdateCronFederatedHPAFailed = "UpdateCronFederatedHPAFailed"
)

// Default history limits, the CRD's defaults, for rules written before
// defaulting.
const (
	defaultSuccessfulHistoryLimit = 3
	defaultFailedHistoryLimit     = 3
)

const actionScale = "Scale"

// +kubebuilder:rbac:groups=autoscaling.karmada.io,resources=cronfederatedhpas,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.karmada.io,resources=cronfederatedhpas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=autoscaling.karmada.io,resources=federatedhpas,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconciler runs the rules of CronFederatedHPAs.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// started holds, per CronFederatedHPA, the rules whose schedules run
	// and when each fires next.
	started map[types.NamespacedName]map[string]*ruleState
}

// ruleState is one running rule: the spec it was started with (a change
// restarts it) and its next execution.
type ruleState struct {
	rule   autoscalingv1alpha1.CronFederatedHPARule
	target autoscalingv2.CrossVersionObjectReference
	next   time.Time
}

// SetupWithManager watches CronFederatedHPAs' specs; the rules' times come
// back through RequeueAfter.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("cronfederatedhpa controller: Client and Recorder are required")
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	r.started = map[types.NamespacedName]map[string]*ruleState{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&autoscalingv1alpha1.CronFederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// Schedule parses a rule's schedule in its time zone (the controller's
// local one when unset).
func Schedule(rule autoscalingv1alpha1.CronFederatedHPARule) (cron.Schedule, *time.Location, error) {
	loc := time.Local
	if tz := ptr.Deref(rule.TimeZone, ""); tz != "" {
		var err error
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, nil, fmt.Errorf("rule %s: timeZone %q: %w", rule.Name, tz, err)
		}
	}
	s, err := cron.ParseStandard(rule.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("rule %s: schedule %q: %w", rule.Name, rule.Schedule, err)
	}
	return s, loc, nil
}

// Reconcile starts new or changed rules, runs those whose time has come,
// writes the histories and asks to come back at the next execution.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfhpa := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfhpa); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading CronFederatedHPA: %w", err)
	}
	if !cfhpa.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}

	now := r.Now()
	states, startErr := r.sync(cfhpa, now)
	if startErr != nil {
		r.Recorder.Eventf(cfhpa, nil, corev1.EventTypeWarning, ReasonStartRuleFailed, actionScale, "%s", startErr.Error())
	}

	histories := slices.Clone(cfhpa.Status.ExecutionHistories)
	histories = slices.DeleteFunc(histories, func(h autoscalingv1alpha1.ExecutionHistory) bool {
		return !slices.ContainsFunc(cfhpa.Spec.Rules, func(rule autoscalingv1alpha1.CronFederatedHPARule) bool { return rule.Name == h.RuleName })
	})
	for i := range histories {
		histories[i] = *histories[i].DeepCopy()
	}
	history := func(name string) *autoscalingv1alpha1.ExecutionHistory {
		for i := range histories {
			if histories[i].RuleName == name {
				return &histories[i]
			}
		}
		histories = append(histories, autoscalingv1alpha1.ExecutionHistory{RuleName: name})
		return &histories[len(histories)-1]
	}

	var wake time.Time
	for _, rule := range cfhpa.Spec.Rules {
		h := history(rule.Name)
		st, running := states[rule.Name]
		if !running {
			// Suspended, or its schedule could not start.
			h.NextExecutionTime = nil
			continue
		}
		if !now.Before(st.next) {
			scheduled := metav1.NewTime(st.next)
			executed := metav1.NewTime(now)
			if err := r.scale(ctx, cfhpa, rule); err != nil {
				r.Recorder.Eventf(cfhpa, nil, corev1.EventTypeWarning, ReasonScaleFailed, actionScale, "rule %s: %s", rule.Name, err.Error())
				h.FailedExecutions = prepend(h.FailedExecutions, autoscalingv1alpha1.FailedExecution{
					ScheduleTime: &scheduled, ExecutionTime: &executed, Message: err.Error(),
				}, int(ptr.Deref(rule.FailedHistoryLimit, defaultFailedHistoryLimit)))
			} else {
				h.SuccessfulExecutions = prepend(h.SuccessfulExecutions, autoscalingv1alpha1.SuccessfulExecution{
					ScheduleTime: &scheduled, ExecutionTime: &executed,
					AppliedReplicas: rule.TargetReplicas, AppliedMinReplicas: rule.TargetMinReplicas, AppliedMaxReplicas: rule.TargetMaxReplicas,
				}, int(ptr.Deref(rule.SuccessfulHistoryLimit, defaultSuccessfulHistoryLimit)))
			}
			r.advance(req.NamespacedName, rule.Name, now)
		}
		next := r.nextOf(req.NamespacedName, rule.Name)
		h.NextExecutionTime = ptr.To(metav1.NewTime(next))
		if wake.IsZero() || next.Before(wake) {
			wake = next
		}
	}

	if !equality.Semantic.DeepEqual(histories, cfhpa.Status.ExecutionHistories) {
		base := cfhpa.DeepCopy()
		cfhpa.Status.ExecutionHistories = histories
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			return r.Client.Status().Patch(ctx, cfhpa, client.MergeFrom(base))
		})
		if err != nil && !apierrors.IsNotFound(err) {
			r.Recorder.Eventf(cfhpa, nil, corev1.EventTypeWarning, ReasonUpdateStatusFailed, actionScale, "%s", err.Error())
			return ctrl.Result{}, fmt.Errorf("writing the execution histories: %w", err)
		}
	}
	if startErr != nil {
		// A schedule or time zone the webhook let through cannot be fixed by
		// retrying; the next spec change comes back here.
		ctrl.LoggerFrom(ctx).Error(startErr, "A rule could not start")
	}
	if wake.IsZero() {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: max(wake.Sub(r.Now()), time.Millisecond)}, nil
}

// sync starts the rules that are new, changed or restarted since the
// controller last saw them, from now, and stops those gone or suspended.
// It returns the running rules.
func (r *Reconciler) sync(cfhpa *autoscalingv1alpha1.CronFederatedHPA, now time.Time) (map[string]ruleState, error) {
	key := client.ObjectKeyFromObject(cfhpa)
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.started[key]
	running := map[string]*ruleState{}
	var errs []error
	for _, rule := range cfhpa.Spec.Rules {
		if ptr.Deref(rule.Suspend, false) {
			continue
		}
		if st, ok := old[rule.Name]; ok && equality.Semantic.DeepEqual(st.rule, rule) && st.target == cfhpa.Spec.ScaleTargetRef {
			running[rule.Name] = st
			continue
		}
		s, loc, err := Schedule(rule)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		running[rule.Name] = &ruleState{rule: *rule.DeepCopy(), target: cfhpa.Spec.ScaleTargetRef, next: s.Next(now.In(loc))}
	}
	r.started[key] = running
	out := make(map[string]ruleState, len(running))
	for name, st := range running {
		out[name] = *st
	}
	return out, errors.Join(errs...)
}

// advance moves a rule's next execution past now.
func (r *Reconciler) advance(key types.NamespacedName, rule string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.started[key][rule]
	if !ok {
		return
	}
	s, loc, err := Schedule(st.rule)
	if err != nil {
		return
	}
	st.next = s.Next(now.In(loc))
}

func (r *Reconciler) nextOf(key types.NamespacedName, rule string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.started[key][rule]; ok {
		return st.next
	}
	return time.Time{}
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.started, key)
}

// prepend puts e first and keeps at most limit entries.
func prepend[T any](list []T, e T, limit int) []T {
	if limit <= 0 {
		return nil
	}
	out := append([]T{e}, list...)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// scale applies a rule to the target: a FederatedHPA's bounds, or a
// workload's replicas through its scale subresource.
func (r *Reconciler) scale(ctx context.Context, cfhpa *autoscalingv1alpha1.CronFederatedHPA, rule autoscalingv1alpha1.CronFederatedHPARule) error {
	ref := cfhpa.Spec.ScaleTargetRef
	key := types.NamespacedName{Namespace: cfhpa.Namespace, Name: ref.Name}
	if ref.APIVersion == autoscalingv1alpha1.GroupVersion.String() {
		if ref.Kind != autoscalingv1alpha1.FederatedHPAKind {
			return fmt.Errorf("scale target %s %s is not supported", ref.APIVersion, ref.Kind)
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			fhpa := &autoscalingv1alpha1.FederatedHPA{}
			if err := r.Client.Get(ctx, key, fhpa); err != nil {
				return fmt.Errorf("reading FederatedHPA %s: %w", key, err)
			}
			base := fhpa.DeepCopy()
			if rule.TargetMaxReplicas != nil {
				fhpa.Spec.MaxReplicas = *rule.TargetMaxReplicas
			}
			if rule.TargetMinReplicas != nil {
				fhpa.Spec.MinReplicas = ptr.To(*rule.TargetMinReplicas)
			}
			if equality.Semantic.DeepEqual(base.Spec, fhpa.Spec) {
				return nil
			}
			return r.Client.Patch(ctx, fhpa, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		})
	}
	if rule.TargetReplicas == nil {
		return fmt.Errorf("rule %s has no targetReplicas for %s %s", rule.Name, ref.Kind, ref.Name)
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return fmt.Errorf("scaleTargetRef.apiVersion %q: %w", ref.APIVersion, err)
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gv.WithKind(ref.Kind))
	target.SetNamespace(cfhpa.Namespace)
	target.SetName(ref.Name)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// The target is read as unstructured, so its scale must be too.
		scale := &unstructured.Unstructured{}
		scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
		if err := r.Client.SubResource("scale").Get(ctx, target, scale); err != nil {
			return fmt.Errorf("reading the scale of %s %s: %w", ref.Kind, key, err)
		}
		current, _, err := unstructured.NestedInt64(scale.Object, "spec", "replicas")
		if err != nil {
			return fmt.Errorf("reading the scale of %s %s: %w", ref.Kind, key, err)
		}
		if current == int64(*rule.TargetReplicas) {
			return nil
		}
		if err := unstructured.SetNestedField(scale.Object, int64(*rule.TargetReplicas), "spec", "replicas"); err != nil {
			return err
		}
		if err := r.Client.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(scale)); err != nil {
			return fmt.Errorf("scaling %s %s: %w", ref.Kind, key, err)
		}
		return nil
	})
}
