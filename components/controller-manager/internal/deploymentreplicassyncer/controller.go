// Package deploymentreplicassyncer is Karmada's deployment-replicas-syncer:
// a Deployment template labelled resourcetemplate.karmada.io/retain-replicas
// (its members' HPAs own their replicas) and divided among its clusters gets
// spec.replicas set to the members' total, status.replicas, once that status
// is known to reflect every member. The template then tells the truth, and
// a rescheduling divides the replicas the HPAs asked for rather than a stale
// count.
package deploymentreplicassyncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "deployment-replicas-syncer"

// waitForStatus is how soon a Deployment whose status is still catching up
// is looked at again, Karmada's interval.
const waitForStatus = time.Second

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings,verbs=get;list;watch

// Reconciler syncs one Deployment's spec.replicas from its status.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager watches labelled Deployments whose replicas, in spec or
// status, change, and those that just got the label.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("deployment-replicas-syncer: Client is required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, okOld := e.ObjectOld.(*appsv1.Deployment)
				n, okNew := e.ObjectNew.(*appsv1.Deployment)
				if !okOld || !okNew || !retained(n) {
					return false
				}
				return !retained(o) || ptr.Deref(o.Spec.Replicas, 1) != ptr.Deref(n.Spec.Replicas, 1) || o.Status.Replicas != n.Status.Replicas
			},
		})).
		Complete(r)
}

func retained(d *appsv1.Deployment) bool {
	return d.Labels[workv1alpha1.RetainReplicasLabel] == workv1alpha1.RetainReplicasValue
}

// Reconcile sets spec.replicas to status.replicas when the status is
// settled: see Settled.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: names.Binding(req.Name, "Deployment")}, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Duplicated Deployments run the template's count in every member:
	// the members' total means nothing for the template.
	if rb.Spec.Placement == nil || rb.Spec.Placement.ReplicaScheduling == nil ||
		rb.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return ctrl.Result{}, nil
	}
	d := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !retained(d) || d.Spec.Replicas == nil || *d.Spec.Replicas == d.Status.Replicas {
		return ctrl.Result{}, nil
	}
	if why := Settled(d, rb); why != "" {
		log.V(1).Info("Waiting before syncing replicas", "reason", why)
		return ctrl.Result{RequeueAfter: waitForStatus}, nil
	}
	from := *d.Spec.Replicas
	base := d.DeepCopy()
	d.Spec.Replicas = ptr.To(d.Status.Replicas)
	if err := r.Client.Patch(ctx, d, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("updating spec.replicas: %w", err)
	}
	log.Info("Synced the Deployment's replicas from its members", "from", from, "to", d.Status.Replicas)
	return ctrl.Result{}, nil
}

// Settled returns why d's status.replicas cannot yet be taken for the
// members' total, or "" when it can, by Karmada's rules: the binding has
// the template's current count and the scheduler has placed it, every
// scheduled member has reported a status with replicas (an HPA never
// scales to zero, so zero means not reported yet), and the template's
// status is the sum of those reports.
func Settled(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) string {
	if d.Spec.Replicas == nil || *d.Spec.Replicas != rb.Spec.Replicas {
		return "the binding does not have the template's replicas yet"
	}
	if rb.Generation != rb.Status.SchedulerObservedGeneration {
		return "the scheduler has not placed the binding's current generation"
	}
	if len(rb.Status.AggregatedStatus) != len(rb.Spec.Clusters) {
		return "not every scheduled cluster has reported its status"
	}
	var sum int32
	for _, item := range rb.Status.AggregatedStatus {
		if item.Status == nil || len(item.Status.Raw) == 0 {
			return "cluster " + item.ClusterName + " has not reported its status"
		}
		var s appsv1.DeploymentStatus
		if err := json.Unmarshal(item.Status.Raw, &s); err != nil {
			return fmt.Sprintf("the status of cluster %s cannot be read: %v", item.ClusterName, err)
		}
		if s.Replicas <= 0 {
			return "cluster " + item.ClusterName + " has not reported its replicas"
		}
		sum += s.Replicas
	}
	if d.Status.Replicas != sum {
		return "the template's status does not hold the members' total yet"
	}
	return ""
}
