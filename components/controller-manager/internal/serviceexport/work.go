package serviceexport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ManagedByKind is this controller's part of the
// endpointslice.karmada.io/managed-by label of a collected Work.
const ManagedByKind = "ServiceExport"

// Collectable reports whether a member EndpointSlice is the member's own:
// those the control plane applied (annotated with their Work) or
// dispatched there are not collected again. The labels say nothing of it:
// the member's endpointslice controller copies a Service's labels, the
// control plane's among them, onto its slices.
func Collectable(slice metav1.Object) bool {
	if _, applied := slice.GetAnnotations()[workv1alpha1.WorkNameAnnotation]; applied {
		return false
	}
	return slice.GetLabels()[discoveryv1.LabelManagedBy] != workv1alpha1.EndpointSliceDispatchControllerLabelValue
}

// ManagedBy splits the managed-by label into its kinds.
func ManagedBy(labels map[string]string) []string {
	v := labels[workv1alpha1.EndpointSliceWorkManagedByLabel]
	if v == "" {
		return nil
	}
	return strings.Split(v, ".")
}

// WithManager returns the managed-by value with kind added, sorted so that
// the same set always reads the same.
func WithManager(current []string, kind string) string {
	out := append(slices.Clone(current), kind)
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ".")
}

// WithoutManager returns the managed-by kinds without kind.
func WithoutManager(current []string, kind string) []string {
	return slices.DeleteFunc(slices.Clone(current), func(k string) bool { return k == kind || k == "" })
}

// WorkName is the collected Work of a member EndpointSlice: the name the Work
// of that EndpointSlice would have.
func WorkName(slice *unstructured.Unstructured) string {
	return names.Work(slice.GetNamespace(), slice.GetName(), "EndpointSlice")
}

// Manifest is the member EndpointSlice as a collected Work carries it:
// without the member's bookkeeping (uid, resourceVersion, managed fields,
// owners), which would only make the Work change when the slice did not.
func Manifest(slice *unstructured.Unstructured) ([]byte, error) {
	out := slice.DeepCopy()
	out.SetAPIVersion(discoveryv1.SchemeGroupVersion.String())
	out.SetKind("EndpointSlice")
	for _, f := range []string{"uid", "resourceVersion", "managedFields", "ownerReferences", "creationTimestamp", "generation", "selfLink", "generateName"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	raw, err := json.Marshal(out.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding EndpointSlice %s/%s: %w", slice.GetNamespace(), slice.GetName(), err)
	}
	return raw, nil
}

// CollectedWork is the Work that collects manifest, the EndpointSlice
// workName of Service namespace/service, into the execution namespace ns,
// for the kinds in managedBy.
func CollectedWork(ns, workName, namespace, service, managedBy string, manifest []byte) *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      workName,
			Labels: map[string]string{
				workv1alpha1.ServiceNamespaceLabel:           namespace,
				workv1alpha1.ServiceNameLabel:                service,
				workv1alpha1.EndpointSliceWorkManagedByLabel: managedBy,
			},
			Finalizers: []string{workv1alpha1.EndpointSliceControllerFinalizer},
		},
		Spec: workv1alpha1.WorkSpec{
			// Collected, never applied.
			SuspendDispatching: ptr.To(true),
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: manifest}},
			}},
		},
	}
}
