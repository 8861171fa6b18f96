// Package workloadrebalancer is Karmada's workload-rebalancer: for each
// workload a WorkloadRebalancer lists, it asks the workload's binding for a
// fresh schedule (spec.rescheduleTriggeredAt), which the scheduler performs
// ignoring where the replicas are now; it records the outcome per workload
// and deletes the rebalancer once its TTL after finishing has passed.
package workloadrebalancer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is Karmada's name for this controller.
const ControllerName = "workload-rebalancer"

// +kubebuilder:rbac:groups=apps.karmada.io,resources=workloadrebalancers,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=apps.karmada.io,resources=workloadrebalancers/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch

// Reconciler reconciles one WorkloadRebalancer.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// APIReader confirms that a binding missing from the cache is missing
	// from the API server too, before the workload is failed for good: a
	// binding created a moment ago may not have reached the cache. Optional.
	APIReader client.Reader
}

// SetupWithManager watches WorkloadRebalancers. Only a new one or a change
// of spec needs a pass: the status is this controller's own, and the TTL
// is waited for by requeueing.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("workload-rebalancer controller: Client is required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&appsv1alpha1.WorkloadRebalancer{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Complete(r)
}

// Reconcile triggers the workloads that have no result yet, writes the
// status once if it changed, and deletes the rebalancer when its TTL after
// finishing has passed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rebalancer := &appsv1alpha1.WorkloadRebalancer{}
	if err := r.Client.Get(ctx, req.NamespacedName, rebalancer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rebalancer.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	observed := Observe(rebalancer.Spec.Workloads, rebalancer.Status.ObservedWorkloads)
	var errs []error
	for i := range observed {
		if observed[i].Result != "" {
			continue
		}
		reason, err := r.trigger(ctx, observed[i].Workload, rebalancer.CreationTimestamp)
		if err != nil {
			// Left without a result: the next pass tries it again.
			errs = append(errs, err)
			continue
		}
		observed[i].Result, observed[i].Reason = appsv1alpha1.RebalanceSuccessful, reason
		if reason != "" {
			observed[i].Result = appsv1alpha1.RebalanceFailed
		}
	}

	status := NextStatus(rebalancer.Status, observed, rebalancer.Generation, metav1.Now())
	if !equality.Semantic.DeepEqual(status, rebalancer.Status) {
		base := rebalancer.DeepCopy()
		rebalancer.Status = status
		// The status is written by this controller alone: no lock needed.
		if err := r.Client.Status().Patch(ctx, rebalancer, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the status of WorkloadRebalancer %s: %w", rebalancer.Name, err)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("WorkloadRebalancer %s: %w", rebalancer.Name, errors.Join(errs...))
	}
	return r.expire(ctx, rebalancer)
}

// trigger asks the binding of workload to reschedule for a rebalancer
// created at created. It returns the reason of a Failed result, empty for
// Successful, or an error when the binding could not be read or written and
// the workload is to be tried again.
func (r *Reconciler) trigger(ctx context.Context, workload appsv1alpha1.ObjectReference, created metav1.Time) (appsv1alpha1.RebalanceFailedReason, error) {
	// An empty namespace names a cluster-scoped template, whose binding is
	// a ClusterResourceBinding.
	var v binding.View
	if workload.Namespace == "" {
		v = binding.ClusterViewOf(&workv1alpha2.ClusterResourceBinding{})
	} else {
		v = binding.ViewOf(&workv1alpha2.ResourceBinding{})
	}
	key := client.ObjectKey{Namespace: workload.Namespace, Name: names.Binding(workload.Name, workload.Kind)}
	err := r.Client.Get(ctx, key, v.Object)
	if apierrors.IsNotFound(err) && r.APIReader != nil {
		err = r.APIReader.Get(ctx, key, v.Object)
	}
	switch {
	case apierrors.IsNotFound(err):
		return appsv1alpha1.RebalanceObjectNotFound, nil
	case err != nil:
		return "", fmt.Errorf("reading the binding %s of %s %s: %w", key, workload.Kind, workload.Name, err)
	}
	if !NeedsTrigger(created, v.Spec.RescheduleTriggeredAt) {
		return "", nil
	}
	base, ok := v.Object.DeepCopyObject().(client.Object)
	if !ok {
		return "", fmt.Errorf("copying the binding %s", key)
	}
	v.Spec.RescheduleTriggeredAt = &created
	// The lock keeps a newer rebalancer's later request from being
	// replaced by this older one.
	err = r.Client.Patch(ctx, v.Object, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return appsv1alpha1.RebalanceObjectNotFound, nil
	case err != nil:
		return "", fmt.Errorf("asking the binding %s to reschedule: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Asked for a fresh schedule", "binding", key, "rescheduleTriggeredAt", created)
	return "", nil
}

// expire deletes a finished rebalancer whose TTL has passed, and comes back
// when it will have.
func (r *Reconciler) expire(ctx context.Context, rebalancer *appsv1alpha1.WorkloadRebalancer) (ctrl.Result, error) {
	at, ok := Expiry(rebalancer)
	if !ok {
		return ctrl.Result{}, nil
	}
	if left := time.Until(at); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	// Only the version just reconciled: workloads added meanwhile are
	// triggered first, and the TTL counts again from their finish.
	rv := rebalancer.ResourceVersion
	err := r.Client.Delete(ctx, rebalancer, client.Preconditions{ResourceVersion: &rv})
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		// A conflict too: changed since it was read, it is looked at again.
		return ctrl.Result{}, fmt.Errorf("deleting WorkloadRebalancer %s after its TTL: %w", rebalancer.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted WorkloadRebalancer after its TTL", "finishTime", rebalancer.Status.FinishTime)
	return ctrl.Result{}, nil
}
