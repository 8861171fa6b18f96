// Package unifiedauth is Karmada's unified-auth controller: it narrows what
// each member's impersonator ServiceAccount may impersonate to the subjects
// the control plane lets proxy to that member (cluster.karmada.io
// clusters/proxy), so that the cluster proxy cannot act in a member as
// anyone the control plane has not allowed there.
//
// For every Cluster with spec.impersonatorSecretRef (Push members joined by
// flotillactl join, Pull members whose agent reports KubeImpersonator), two
// Works in the cluster's execution namespace carry the ClusterRole
// karmada-impersonator, allowing impersonate on those users, service
// accounts and groups by name, and the ClusterRoleBinding
// karmada-impersonator of it to the ServiceAccount karmada-impersonator in
// the namespace of the impersonator Secret. The execution controller (or a
// Pull member's agent) applies them. With no subject the ClusterRole has
// no rules and nobody can be impersonated.
//
// A Cluster is synced when it is created or its spec changes, when a
// ClusterRole naming clusters/proxy for it, or a ClusterRoleBinding of
// such a role, changes, and when one of its two Works is changed or
// deleted by someone else. A deleted Cluster's Works go with its execution
// namespace (and its owner reference).
package unifiedauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// ControllerName names the controller and its events, Karmada's.
const ControllerName = "unified-auth-controller"

// ImpersonatorName names the member's ClusterRole and ClusterRoleBinding,
// and the ServiceAccount they are for.
const ImpersonatorName = "karmada-impersonator"

// The Works' names, as a binding's Works of those objects would be named.
var (
	RoleWorkName    = names.Work("", ImpersonatorName, "ClusterRole")
	BindingWorkName = names.Work("", ImpersonatorName, "ClusterRoleBinding")
)

// actionSync is the events' action (events.k8s.io/v1 requires one).
const actionSync = "SyncImpersonationConfig"

// retrySoon is how soon a Cluster is tried again when its execution
// namespace is not there yet (the cluster controller makes it) or a write
// lost a race.
const retrySoon = time.Second

// Reconciler keeps each Cluster's impersonation Works. Set the fields,
// then call SetupWithManager.
type Reconciler struct {
	// Client reads Clusters, ClusterRoles, ClusterRoleBindings and Works
	// through the manager's cache, and writes Works.
	Client client.Client
	// Recorder records on the Cluster whether its Works were written.
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=cluster.karmada.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("unified-auth controller: Client and Recorder are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			// Status writes, frequent, change nothing here.
			UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfRole)).
		Watches(&rbacv1.ClusterRoleBinding{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfBinding)).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(clusterOfWork), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return clusterOfWork(context.Background(), o) != nil }),
			predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return false },
				UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
			})).
		Complete(r)
}

// clusterOfWork maps one of this controller's Works to its Cluster.
func clusterOfWork(_ context.Context, o client.Object) []reconcile.Request {
	if o.GetName() != RoleWorkName && o.GetName() != BindingWorkName {
		return nil
	}
	cluster, ok := names.ClusterOfExecutionSpace(o.GetNamespace())
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: cluster}}}
}

// clustersOfRole maps a ClusterRole (before and after a change: the
// handler is called with both) to the Clusters it lets one proxy to.
func (r *Reconciler) clustersOfRole(ctx context.Context, o client.Object) []reconcile.Request {
	role, ok := o.(*rbacv1.ClusterRole)
	if !ok {
		return nil
	}
	named, all := ClustersOfRole(role)
	if !all {
		out := make([]reconcile.Request, 0, len(named))
		for _, n := range named {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
		}
		return out
	}
	var clusters clusterv1alpha1.ClusterList
	if err := r.Client.List(ctx, &clusters); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Clusters for a ClusterRole change", "clusterRole", role.Name)
		return nil
	}
	out := make([]reconcile.Request, 0, len(clusters.Items))
	for _, c := range clusters.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return out
}

// clustersOfBinding maps a ClusterRoleBinding to the Clusters its
// ClusterRole lets one proxy to.
func (r *Reconciler) clustersOfBinding(ctx context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*rbacv1.ClusterRoleBinding)
	if !ok || b.RoleRef.Kind != "ClusterRole" {
		return nil
	}
	role := &rbacv1.ClusterRole{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, role); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "Reading the ClusterRole of a ClusterRoleBinding", "clusterRoleBinding", b.Name)
		}
		return nil
	}
	return r.clustersOfRole(ctx, role)
}

// Reconcile writes one Cluster's impersonation Works.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if cluster.Spec.ImpersonatorSecretRef == nil {
		log.V(1).Info("Unified auth is off for the cluster: it has no impersonator secret")
		return ctrl.Result{}, nil
	}

	var roles rbacv1.ClusterRoleList
	if err := r.Client.List(ctx, &roles); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ClusterRoles: %w", err)
	}
	var bindings rbacv1.ClusterRoleBindingList
	if err := r.Client.List(ctx, &bindings); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ClusterRoleBindings: %w", err)
	}
	manifests, err := Manifests(cluster, ImpersonationRules(Subjects(roles.Items, bindings.Items, cluster.Name)))
	if err != nil {
		return ctrl.Result{}, err
	}

	written := false
	for _, m := range manifests {
		wrote, err := r.ensureWork(ctx, cluster, m)
		if apierrors.IsNotFound(err) {
			log.V(1).Info("Execution namespace missing; waiting for it", "namespace", names.ExecutionSpace(cluster.Name))
			return ctrl.Result{RequeueAfter: retrySoon}, nil
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			// Lost a race with another writer; the next pass starts from
			// what the cache has then.
			return ctrl.Result{RequeueAfter: retrySoon}, nil
		}
		if err != nil {
			r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncImpersonationConfigFailed, actionSync,
				"Failed to sync impersonation config: %v", err)
			return ctrl.Result{}, err
		}
		written = written || wrote
	}
	if written {
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncImpersonationConfigSucceed, actionSync,
			"Sync impersonation config succeed.")
	}
	return ctrl.Result{}, nil
}

// Manifest is the object one Work carries, and that Work's name.
type Manifest struct {
	WorkName string
	Object   runtime.Object
}

// Manifests are the objects of cluster's two Works: the ClusterRole with
// rules and its ClusterRoleBinding to the impersonator ServiceAccount,
// which is in the namespace of the cluster's impersonator Secret, as
// join and the agent create it.
func Manifests(cluster *clusterv1alpha1.Cluster, rules []rbacv1.PolicyRule) ([]Manifest, error) {
	if cluster.Spec.ImpersonatorSecretRef == nil {
		return nil, fmt.Errorf("cluster %s: no spec.impersonatorSecretRef", cluster.Name)
	}
	if rules == nil {
		// An empty list, not an absent field: applied, it removes the rules
		// a ClusterRole of the name had before, whoever wrote them.
		rules = []rbacv1.PolicyRule{}
	}
	meta := metav1.ObjectMeta{
		Name: ImpersonatorName,
		// The names are the impersonator's: a ClusterRole or binding of
		// them in the member (made by an earlier join) is taken over.
		Annotations: map[string]string{workv1alpha1.ConflictResolutionAnnotation: workv1alpha1.ConflictResolutionOverwrite},
	}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: meta,
		Rules:      rules,
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: *meta.DeepCopy(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImpersonatorName},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Namespace: cluster.Spec.ImpersonatorSecretRef.Namespace, Name: ImpersonatorName,
		}},
	}
	return []Manifest{{WorkName: RoleWorkName, Object: role}, {WorkName: BindingWorkName, Object: binding}}, nil
}

// ensureWork creates or updates the Work of m in cluster's execution
// namespace; it reports whether it wrote. A NotFound error means the
// execution namespace does not exist yet.
func (r *Reconciler) ensureWork(ctx context.Context, cluster *clusterv1alpha1.Cluster, m Manifest) (bool, error) {
	raw, err := encode(m.Object)
	if err != nil {
		return false, fmt.Errorf("encoding Work %s's manifest: %w", m.WorkName, err)
	}
	key := client.ObjectKey{Namespace: names.ExecutionSpace(cluster.Name), Name: m.WorkName}
	existing := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, key, existing); err != nil {
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("reading Work %s: %w", key, err)
		}
		existing = nil
	}
	owner := metav1.NewControllerRef(cluster, clusterv1alpha1.GroupVersion.WithKind("Cluster"))
	if existing == nil {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels:          map[string]string{workv1alpha1.WorkPermanentIDLabel: string(uuid.NewUUID())},
			Finalizers:      []string{workv1alpha1.ExecutionControllerFinalizer},
			OwnerReferences: []metav1.OwnerReference{*owner},
		}}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
		if err := r.Client.Create(ctx, w); err != nil {
			if apierrors.IsNotFound(err) {
				return false, err
			}
			return false, fmt.Errorf("creating Work %s: %w", key, err)
		}
		return true, nil
	}
	if !existing.DeletionTimestamp.IsZero() {
		// Made again once gone: its deletion brings the Cluster back.
		return false, nil
	}
	if err := workcache.Expand(existing); err != nil {
		return false, err
	}
	same, err := sameManifest(existing, raw)
	if err != nil {
		return false, err
	}
	owned := metav1.IsControlledBy(existing, cluster)
	if same && owned {
		return false, nil
	}
	updated := existing.DeepCopy()
	updated.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	if !owned {
		updated.OwnerReferences = append(updated.OwnerReferences, *owner)
	}
	if err := r.Client.Update(ctx, updated); err != nil {
		return false, fmt.Errorf("updating Work %s: %w", key, err)
	}
	return true, nil
}

// encode is the JSON of obj without the null creationTimestamp typed
// objects carry, which the API server would drop from the stored Work and
// so make every comparison differ.
func encode(obj runtime.Object) ([]byte, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	return json.Marshal(u)
}

// sameManifest tells whether w carries exactly the object raw is, compared
// as JSON values: the API server may have reordered its keys.
func sameManifest(w *workv1alpha1.Work, raw []byte) (bool, error) {
	if len(w.Spec.Workload.Manifests) != 1 {
		return false, nil
	}
	var have, want any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &have); err != nil {
		// Unreadable: it is rewritten.
		return false, nil //nolint:nilerr // a bad manifest is replaced, not reported
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		return false, fmt.Errorf("decoding the desired manifest: %w", err)
	}
	return reflect.DeepEqual(have, want), nil
}
