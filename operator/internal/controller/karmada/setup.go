package karmada

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

// The operator's permissions on its host cluster.
// +kubebuilder:rbac:groups=operator.karmada.io,resources=karmadas,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=operator.karmada.io,resources=karmadas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=operator.karmada.io,resources=karmadas/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;secrets;serviceaccounts;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=deletecollection
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;create;update

// SetupWithManager registers the reconciler and what it watches: its
// Karmadas, and every object it made for them, so that a change or
// deletion by someone else is put back.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.Karmada{}).
		Owns(&appsv1.Deployment{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		// The operator's Secrets and Helm's release records carry the
		// instance's name as a label, not an owner reference: they outlive
		// the instance when its data is preserved.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(byInstanceLabel)).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

func byInstanceLabel(_ context.Context, obj client.Object) []reconcile.Request {
	name, ok := obj.GetLabels()[operatorv1alpha1.LabelKarmadaName]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// CachedObjects are the kinds the operator caches, each only where it
// carries the instance label: the operator never holds the host's other
// Secrets or Deployments in memory.
func CachedObjects() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.Secret{}}
}
