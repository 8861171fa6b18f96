// Package serviceimport is the service-import controller: for every
// ServiceImport of type ClusterSetIP in the control plane it derives the
// Service derived-<name>, as Karmada's does.
//
// The derived Service is a ClusterIP Service without selector, with the
// ServiceImport's ports and session affinity. Karmada also copies spec.ips
// into the Service's status.loadBalancer.ingress; the API server refuses
// load balancer status on a ClusterIP Service, so that part is left out.
// It is a dependency of the ServiceImport (see the native
// interpreter), so it follows the ServiceImport to the clusters that import
// the service, with the EndpointSlices collected from the exporting
// clusters. It is deleted with the ServiceImport.
package serviceimport

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is Karmada's name of the controller.
const ControllerName = "service-import-controller"

// derivedPrefix starts the name of every derived Service.
const derivedPrefix = "derived-"

// Reconciler derives Services from ServiceImports. Set the exported fields,
// then call SetupWithManager.
type Reconciler struct {
	// Client reads ServiceImports and Services through the manager's cache
	// and writes Services.
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=serviceimports,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers the controller on ServiceImports and on the
// derived Services, so that one changed or deleted by hand is made right.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("service-import controller: Client and Recorder are required")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&multiclusterv1alpha1.ServiceImport{}).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(importOfDerived)).
		Complete(r)
}

// importOfDerived maps a derived Service to its ServiceImport.
func importOfDerived(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetName()
	if len(name) <= len(derivedPrefix) || name[:len(derivedPrefix)] != derivedPrefix {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name[len(derivedPrefix):]}}}
}

// Reconcile writes the derived Service of one ServiceImport, or deletes it
// once the ServiceImport is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	derivedKey := client.ObjectKey{Namespace: req.Namespace, Name: names.DerivedService(req.Name)}
	imp := &multiclusterv1alpha1.ServiceImport{}
	if err := r.Client.Get(ctx, req.NamespacedName, imp); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("getting ServiceImport: %w", err)
		}
		return ctrl.Result{}, r.deleteDerived(ctx, derivedKey)
	}
	if !imp.DeletionTimestamp.IsZero() || imp.Spec.Type != multiclusterv1alpha1.ClusterSetIP {
		return ctrl.Result{}, nil
	}
	if err := r.sync(ctx, imp, derivedKey); err != nil {
		r.Recorder.Eventf(imp, nil, corev1.EventTypeWarning, flotillaevents.ReasonSyncDerivedServiceFailed, "SyncDerivedService", "%v", err)
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// sync creates or updates the derived Service.
func (r *Reconciler) sync(ctx context.Context, imp *multiclusterv1alpha1.ServiceImport, key client.ObjectKey) error {
	desired := Derive(imp)
	svc := &corev1.Service{}
	err := r.Client.Get(ctx, key, svc)
	switch {
	case apierrors.IsNotFound(err):
		svc = desired.DeepCopy()
		if err := r.Client.Create(ctx, svc); err != nil {
			return fmt.Errorf("creating derived Service %s: %w", key, err)
		}
	case err != nil:
		return fmt.Errorf("getting derived Service %s: %w", key, err)
	case !equality.Semantic.DeepEqual(svc.Spec.Ports, desired.Spec.Ports) || svc.Spec.Type != desired.Spec.Type ||
		svc.Spec.SessionAffinity != desired.Spec.SessionAffinity ||
		!equality.Semantic.DeepEqual(svc.Spec.SessionAffinityConfig, desired.Spec.SessionAffinityConfig):
		// The cluster IP and the server's defaults are kept.
		svc.Spec.Type, svc.Spec.Ports = desired.Spec.Type, desired.Spec.Ports
		svc.Spec.SessionAffinity, svc.Spec.SessionAffinityConfig = desired.Spec.SessionAffinity, desired.Spec.SessionAffinityConfig
		if err := r.Client.Update(ctx, svc); err != nil {
			return fmt.Errorf("updating derived Service %s: %w", key, err)
		}
	default:
		return nil
	}
	r.Recorder.Eventf(imp, nil, corev1.EventTypeNormal, flotillaevents.ReasonSyncDerivedServiceSucceed, "SyncDerivedService",
		"Sync derived service for serviceImport(%s) succeed.", imp.Name)
	return nil
}

// Derive is the Service derived from imp.
func Derive(imp *multiclusterv1alpha1.ServiceImport) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: imp.Namespace, Name: names.DerivedService(imp.Name)},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       imp.Spec.SessionAffinity,
			SessionAffinityConfig: imp.Spec.SessionAffinityConfig,
		},
	}
	if svc.Spec.SessionAffinity == "" {
		// The server's default, so that a Service read back compares equal.
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	for _, p := range imp.Spec.Ports {
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: protocol, AppProtocol: p.AppProtocol, Port: p.Port,
			// The server defaults targetPort to port; set here, a Service read
			// back compares equal.
			TargetPort: intstrOf(p.Port)})
	}
	return svc
}

// deleteDerived deletes the derived Service of a ServiceImport that is gone.
func (r *Reconciler) deleteDerived(ctx context.Context, key client.ObjectKey) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := r.Client.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting derived Service %s: %w", key, err)
	}
	return nil
}

func intstrOf(port int32) intstr.IntOrString { return intstr.FromInt32(port) }
