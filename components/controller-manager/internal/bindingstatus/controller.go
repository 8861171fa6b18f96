package bindingstatus

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Controller names, as Karmada's.
const (
	ControllerName        = "resource-binding-status-controller"
	ClusterControllerName = "cluster-resource-binding-status-controller"
)

// DefaultFirstReportGrace is the default of Reconciler.FirstReportGrace.
const DefaultFirstReportGrace = time.Minute

// Reconciler aggregates Work statuses into bindings and templates. Set the
// exported fields, then call SetupWithManager, which registers one
// controller for ResourceBindings and one for ClusterResourceBindings.
type Reconciler struct {
	// Client reads bindings and Works through the manager's cache, and
	// writes.
	Client client.Client
	// Templates reads the bindings' resource templates.
	Templates binding.TemplateReader
	// Interpreter aggregates statuses.
	Interpreter interpreter.Interpreter
	// Recorder records events on bindings and templates.
	Recorder events.EventRecorder
	// MaxConcurrentReconciles bounds the bindings of each kind aggregated
	// at once. Default: 5.
	MaxConcurrentReconciles int
	// FirstReportGrace is how long a new binding's first status may wait
	// for its Works to be created and applied, so that it is written once
	// rather than at each step. Default: DefaultFirstReportGrace; negative
	// writes every step.
	FirstReportGrace time.Duration

	templates *templateStatus
}

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=*,resources=*/status,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager registers both controllers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Templates.API == nil || r.Interpreter == nil || r.Recorder == nil {
		return errors.New("binding status controller: Client, Templates.API, Interpreter and Recorder are required")
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = 5
	}
	if r.FirstReportGrace == 0 {
		r.FirstReportGrace = DefaultFirstReportGrace
	}
	r.templates = &templateStatus{r: r}
	opts := controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}
	bindingChanged := builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return bindingChanged(e.ObjectOld, e.ObjectNew)
	}})
	workChanged := builder.WithPredicates(predicate.Funcs{
		UpdateFunc:  func(e event.UpdateEvent) bool { return workChanged(e.ObjectOld, e.ObjectNew) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})

	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&workv1alpha2.ResourceBinding{}, delayed(itself), bindingChanged).
		Watches(&workv1alpha1.Work{}, delayed(resourceBindingOfWork), workChanged).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileResourceBinding))
	if err != nil {
		return fmt.Errorf("setting up %s: %w", ControllerName, err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(ClusterControllerName).
		Watches(&workv1alpha2.ClusterResourceBinding{}, delayed(itself), bindingChanged).
		Watches(&workv1alpha1.Work{}, delayed(clusterResourceBindingOfWork), workChanged).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileClusterResourceBinding))
	if err != nil {
		return fmt.Errorf("setting up %s: %w", ClusterControllerName, err)
	}
	return nil
}

// bindingChanged keeps binding updates that change where Works should be
// (the spec) or which Works are the binding's (its id label). The status
// this controller writes is skipped.
func bindingChanged(oldObj, newObj client.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		!equality.Semantic.DeepEqual(oldObj.GetLabels(), newObj.GetLabels())
}

// workChanged keeps Work updates that change what is aggregated: status,
// deletion and the labels and annotations naming the binding.
func workChanged(oldObj, newObj client.Object) bool {
	o, okOld := oldObj.(*workv1alpha1.Work)
	n, okNew := newObj.(*workv1alpha1.Work)
	if !okOld || !okNew {
		return true
	}
	return !equality.Semantic.DeepEqual(o.Status, n.Status) ||
		!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!equality.Semantic.DeepEqual(o.Annotations, n.Annotations)
}
