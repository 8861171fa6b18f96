package binding

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// desiredWork is what a binding's Work for one cluster should hold.
type desiredWork struct {
	namespace, name string
	// labels and annotations are set on the Work; others it has are kept,
	// except the keys of dropLabels and dropAnnotations.
	labels, annotations         map[string]string
	dropLabels, dropAnnotations []string
	// manifest is the rendered object as canonical JSON.
	manifest []byte
	suspend  bool
	preserve bool
}

// bindingLabelKeys and bindingAnnotationKeys link a Work to a binding; a
// Work taken over from another binding loses those that are not ours.
func bindingLabelKeys() []string {
	return []string{workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingPermanentIDLabel}
}

func bindingAnnotationKeys() []string {
	return []string{
		workv1alpha2.ResourceBindingNamespaceAnnotationKey, workv1alpha2.ResourceBindingNameAnnotationKey,
		workv1alpha2.ClusterResourceBindingAnnotationKey,
	}
}

// buildWork assembles the desired Work of one cluster from its rendered
// manifest. The Work carries the binding's id label and name annotations,
// the manifest's conflict resolution and, as Karmada's Works do, the
// applied-overrides records.
func buildWork(v View, r *rendered, t target, work workIdentity) (*desiredWork, error) {
	manifest, err := json.Marshal(r.manifest.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding manifest: %w", err)
	}
	d := &desiredWork{
		namespace:   work.namespace,
		name:        work.name,
		labels:      map[string]string{workv1alpha1.WorkPermanentIDLabel: work.id},
		annotations: v.WorkAnnotations(),
		manifest:    manifest,
		suspend:     t.suspend,
		preserve:    ptr.Deref(v.Spec.PreserveResourcesOnDeletion, false),
	}
	if id := v.ID(); id != "" {
		d.labels[v.IDLabel()] = id
	}
	for _, k := range bindingLabelKeys() {
		if _, ok := d.labels[k]; !ok {
			d.dropLabels = append(d.dropLabels, k)
		}
	}
	for _, k := range bindingAnnotationKeys() {
		if _, ok := d.annotations[k]; !ok {
			d.dropAnnotations = append(d.dropAnnotations, k)
		}
	}
	d.annotations[workv1alpha1.ConflictResolutionAnnotation] = r.conflictResolution
	applied := r.manifest.GetAnnotations()
	for _, k := range []string{policyv1alpha1.AppliedOverrides, policyv1alpha1.AppliedClusterOverrides} {
		if v, ok := applied[k]; ok {
			d.annotations[k] = v
		} else {
			d.dropAnnotations = append(d.dropAnnotations, k)
		}
	}
	return d, nil
}

// newWork is the Work to create. It starts with the execution controller's
// finalizer, so that it can never go before its member objects are removed,
// even if deleted before the execution controller first sees it.
func (d *desiredWork) newWork() *workv1alpha1.Work {
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   d.namespace,
			Name:        d.name,
			Labels:      maps.Clone(d.labels),
			Annotations: maps.Clone(d.annotations),
			Finalizers:  []string{workv1alpha1.ExecutionControllerFinalizer},
		},
	}
	d.setSpec(w)
	return w
}

func (d *desiredWork) setSpec(w *workv1alpha1.Work) {
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: d.manifest}}}
	w.Spec.SuspendDispatching = ptr.To(d.suspend)
	w.Spec.PreserveResourcesOnDeletion = ptr.To(d.preserve)
}

// upToDate tells whether existing already holds everything d asks for, in
// which case the Work is not written.
func (d *desiredWork) upToDate(existing *workv1alpha1.Work) (bool, error) {
	if ptr.Deref(existing.Spec.SuspendDispatching, false) != d.suspend ||
		ptr.Deref(existing.Spec.PreserveResourcesOnDeletion, false) != d.preserve ||
		!containsAll(existing.Labels, d.labels) || !containsAll(existing.Annotations, d.annotations) ||
		containsAny(existing.Labels, d.dropLabels) || containsAny(existing.Annotations, d.dropAnnotations) ||
		!slices.Contains(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer) ||
		len(existing.Spec.Workload.Manifests) != 1 {
		return false, nil
	}
	return workcache.SameManifest(existing, 0, d.manifest)
}

// apply makes existing hold what d asks for, keeping its other labels,
// annotations and finalizers.
func (d *desiredWork) apply(existing *workv1alpha1.Work) {
	existing.Labels = merge(existing.Labels, d.labels, d.dropLabels)
	existing.Annotations = merge(existing.Annotations, d.annotations, d.dropAnnotations)
	if !slices.Contains(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		existing.Finalizers = append(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	}
	d.setSpec(existing)
}

func merge(into, set map[string]string, drop []string) map[string]string {
	if into == nil {
		into = make(map[string]string, len(set))
	}
	for _, k := range drop {
		delete(into, k)
	}
	maps.Copy(into, set)
	return into
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func containsAny(have map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := have[k]; ok {
			return true
		}
	}
	return false
}
