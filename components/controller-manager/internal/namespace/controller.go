// Package namespace is the namespace sync controller: every namespace of the
// control plane exists in every member, so that namespaced templates can be
// propagated there, except the control plane's reserved namespaces, default,
// names matching the skip list, and namespaces labelled
// namespace.karmada.io/skip-auto-propagation=true. A namespace deleted in the
// control plane is deleted in the members where the control plane made or
// adopted it.
//
// Karmada carries each namespace to each member in a Work in the member's
// execution namespace, owned by the namespace so that garbage collection
// removes it, and the execution controller applies it. Until Flotilla's
// execution controller exists, this controller writes to the members
// directly through their clients, marking what it owns the way the execution
// controller will (karmada.io/managed and the managed-labels/annotations
// annotations), so the switch to Works changes no member object. Until then,
// a namespace deleted while this controller is down stays in the members.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// ControllerName names the controller.
const ControllerName = "namespace-sync-controller"

// memberParallelism bounds the members one namespace is written to at once.
const memberParallelism = 8

// Reconciler propagates namespaces. Set the exported fields, then call
// SetupWithManager.
type Reconciler struct {
	Client  client.Client
	Members *membercluster.ClientCache
	// SkippedNamespaces are never propagated when their name matches one of
	// these (Karmada's --skipped-propagating-namespaces).
	SkippedNamespaces []*regexp.Regexp
	// MaxConcurrentReconciles bounds the namespaces synced at once.
	// Default: 5.
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// SetupWithManager registers the controller. A Cluster that joins, or
// becomes Ready again, gets every namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Members == nil {
		return errors.New("namespace sync controller: Client and Members are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Namespace{}, builder.OnlyMetadata, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return namespaceChanged(e.ObjectOld, e.ObjectNew)
		}})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allNamespaces), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return becameReady(e.ObjectOld, e.ObjectNew) },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}

// namespaceChanged: what is propagated is the labels and annotations, and
// the deletion.
func namespaceChanged(oldObj, newObj client.Object) bool {
	return !maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp())
}

// becameReady: a member is synced only while Ready, so it catches up when it
// turns Ready.
func becameReady(oldObj, newObj client.Object) bool {
	oldC, okOld := oldObj.(*clusterv1alpha1.Cluster)
	newC, okNew := newObj.(*clusterv1alpha1.Cluster)
	return okOld && okNew && !isReady(oldC) && isReady(newC)
}

func isReady(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

func (r *Reconciler) allNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing namespaces to sync to a member")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		if propagatable(ns.Name, r.SkippedNamespaces) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
		}
	}
	return reqs
}

// Reconcile makes one namespace exist, or not, in every Ready Push member.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !propagatable(req.Name, r.SkippedNamespaces) {
		return ctrl.Result{}, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	err := r.Client.Get(ctx, req.NamespacedName, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting namespace: %w", err)
	}
	gone := apierrors.IsNotFound(err) || !ns.DeletionTimestamp.IsZero()
	if !gone && optedOut(ns.Labels) {
		// Opting out stops propagation; what members have stays theirs.
		return ctrl.Result{}, nil
	}

	clusters, err := r.reachableMembers(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, memberParallelism)
	)
	for _, c := range clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx := ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("member", c.Name))
			var err error
			if gone {
				err = r.removeFromMember(ctx, c, req.Name)
			} else {
				err = r.syncToMember(ctx, c, ns)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("member %s: %w", c.Name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ctrl.Result{}, errors.Join(errs...)
}

// reachableMembers are the Push clusters that are Ready and not leaving. A
// member that is down is caught up when it turns Ready; a Pull member's
// agent will apply the namespace Works once they exist.
func (r *Reconciler) reachableMembers(ctx context.Context) ([]*clusterv1alpha1.Cluster, error) {
	var list clusterv1alpha1.ClusterList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	var out []*clusterv1alpha1.Cluster
	for i := range list.Items {
		c := &list.Items[i]
		if c.Spec.SyncMode == clusterv1alpha1.Push && c.DeletionTimestamp.IsZero() && isReady(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (r *Reconciler) syncToMember(ctx context.Context, cluster *clusterv1alpha1.Cluster, cp *metav1.PartialObjectMetadata) error {
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return err
	}
	existing := &corev1.Namespace{}
	if err := clients.Client.Get(ctx, client.ObjectKey{Name: cp.Name}, existing); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("getting namespace %s: %w", cp.Name, err)
		}
		existing = nil
	}
	if existing != nil && !existing.DeletionTimestamp.IsZero() {
		// Deleted and recreated in a row: wait for the old one to go.
		return fmt.Errorf("namespace %s is still terminating in the member", cp.Name)
	}
	want, changed := memberNamespace(existing, cp)
	if !changed {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	if existing == nil {
		if err := clients.Client.Create(ctx, want); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("namespace %s appeared in the member meanwhile: %w", cp.Name, err)
			}
			return fmt.Errorf("creating namespace %s: %w", cp.Name, err)
		}
		log.Info("Created namespace in member", "namespace", cp.Name)
		return nil
	}
	if err := clients.Client.Update(ctx, want); err != nil {
		return fmt.Errorf("updating namespace %s: %w", cp.Name, err)
	}
	log.Info("Updated namespace in member", "namespace", cp.Name)
	return nil
}

func (r *Reconciler) removeFromMember(ctx context.Context, cluster *clusterv1alpha1.Cluster, name string) error {
	clients, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return err
	}
	existing := &corev1.Namespace{}
	if err := clients.Client.Get(ctx, client.ObjectKey{Name: name}, existing); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !managedByControlPlane(existing) || !existing.DeletionTimestamp.IsZero() {
		return nil
	}
	// The uid precondition keeps a namespace recreated meanwhile.
	if err := clients.Client.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted namespace in member", "namespace", name)
	return nil
}
