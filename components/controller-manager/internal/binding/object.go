package binding

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// View is a ResourceBinding or a ClusterResourceBinding as the controllers
// see them: both kinds share their spec and status and differ only in
// scope, finalizer and the keys that link Works back to them.
type View struct {
	// Object is the *ResourceBinding or *ClusterResourceBinding.
	Object client.Object
	Spec   *workv1alpha2.ResourceBindingSpec
	Status *workv1alpha2.ResourceBindingStatus
}

// ViewOf wraps a ResourceBinding.
func ViewOf(rb *workv1alpha2.ResourceBinding) View {
	return View{Object: rb, Spec: &rb.Spec, Status: &rb.Status}
}

// ClusterViewOf wraps a ClusterResourceBinding.
func ClusterViewOf(crb *workv1alpha2.ClusterResourceBinding) View {
	return View{Object: crb, Spec: &crb.Spec, Status: &crb.Status}
}

// AsView wraps o when it is a *ResourceBinding or *ClusterResourceBinding.
func AsView(o client.Object) (View, bool) {
	switch b := o.(type) {
	case *workv1alpha2.ResourceBinding:
		return ViewOf(b), true
	case *workv1alpha2.ClusterResourceBinding:
		return ClusterViewOf(b), true
	}
	return View{}, false
}

// NewObject is an empty ClusterResourceBinding when clustered, else an
// empty ResourceBinding, to read one into.
func NewObject(clustered bool) client.Object {
	if clustered {
		return &workv1alpha2.ClusterResourceBinding{}
	}
	return &workv1alpha2.ResourceBinding{}
}

// Clustered reports whether this is a ClusterResourceBinding.
func (v View) Clustered() bool {
	_, ok := v.Object.(*workv1alpha2.ClusterResourceBinding)
	return ok
}

// Kind is ResourceBinding or ClusterResourceBinding, for logs and messages.
func (v View) Kind() string {
	if v.Clustered() {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// IDLabel is the label holding the binding's permanent id, on the binding
// and on its Works.
func (v View) IDLabel() string {
	if v.Clustered() {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// ID is the binding's permanent id, empty until assigned.
func (v View) ID() string {
	return v.Object.GetLabels()[v.IDLabel()]
}

// Finalizer is the binding controller's finalizer for this kind.
func (v View) Finalizer() string {
	if v.Clustered() {
		return workv1alpha2.ClusterResourceBindingControllerFinalizer
	}
	return workv1alpha2.BindingControllerFinalizer
}

// WorkAnnotations are the annotations naming the binding on its Works (and
// their manifests).
func (v View) WorkAnnotations() map[string]string {
	if v.Clustered() {
		return map[string]string{workv1alpha2.ClusterResourceBindingAnnotationKey: v.Object.GetName()}
	}
	return map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotationKey: v.Object.GetNamespace(),
		workv1alpha2.ResourceBindingNameAnnotationKey:      v.Object.GetName(),
	}
}

// Owns reports whether a Work, by its labels and annotations, belongs to
// this binding. A Work carrying a binding id belongs to the binding of that
// kind and id; one without any is matched by the binding's name, as Works
// written by other tools may be.
func (v View) Owns(labels, annotations map[string]string) bool {
	if got, ok := labels[v.IDLabel()]; ok {
		return got != "" && got == v.ID()
	}
	other := workv1alpha2.ClusterResourceBindingPermanentIDLabel
	if v.Clustered() {
		other = workv1alpha2.ResourceBindingPermanentIDLabel
	}
	if _, ok := labels[other]; ok {
		return false
	}
	for k, want := range v.WorkAnnotations() {
		if annotations[k] != want {
			return false
		}
	}
	return true
}

// ExistingClusters are the clusters where the binding may have a Work: the
// scheduled ones, those of bindings that require this one, and those it is
// being gracefully evicted from (their copies stay until the eviction ends,
// unless purged Directly).
func ExistingClusters(spec *workv1alpha2.ResourceBindingSpec) map[string]bool {
	out := make(map[string]bool, len(spec.Clusters))
	for _, c := range spec.Clusters {
		out[c.Name] = true
	}
	for _, r := range spec.RequiredBy {
		for _, c := range r.Clusters {
			out[c.Name] = true
		}
	}
	for _, t := range spec.GracefulEvictionTasks {
		// A copy purged Directly goes at once, as in Karmada; the task
		// stays for the scheduler and the state it carries.
		if t.PurgeMode != policyv1alpha1.PurgeModeDirectly {
			out[t.FromCluster] = true
		}
	}
	return out
}
