package namespace

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// propagatable says whether a namespace name may be propagated at all.
// Reserved namespaces belong to the control plane, and default exists in
// every member already: Karmada leaves both alone, as it does names matching
// --skipped-propagating-namespaces.
func propagatable(name string, skipped []*regexp.Regexp) bool {
	if names.IsReserved(name) || name == metav1.NamespaceDefault {
		return false
	}
	for _, re := range skipped {
		if re.MatchString(name) {
			return false
		}
	}
	return true
}

// optedOut: the namespace is labelled not to be propagated (the label's value
// is compared case-insensitively, as Karmada does).
func optedOut(labels map[string]string) bool {
	return strings.EqualFold(labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel], "true")
}

// memberNamespace returns the member's namespace as the control plane's
// namespace cp wants it, starting from existing (nil if there is none), and
// whether that differs from existing. The control plane owns the labels and
// annotations it propagates, recorded in the managed-labels and
// managed-annotations annotations: those it dropped are removed from the
// member, anything the member added itself is kept.
func memberNamespace(existing *corev1.Namespace, cp metav1.Object) (*corev1.Namespace, bool) {
	wantLabels := map[string]string{}
	for k, v := range cp.GetLabels() {
		// Each API server sets this one on its own namespaces.
		if k != corev1.LabelMetadataName {
			wantLabels[k] = v
		}
	}
	wantLabels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	wantAnnotations := maps.Clone(cp.GetAnnotations())
	if wantAnnotations == nil {
		wantAnnotations = map[string]string{}
	}
	// The control plane's own bookkeeping, if any, is not the member's.
	delete(wantAnnotations, workv1alpha1.ManagedLabelsAnnotation)
	delete(wantAnnotations, workv1alpha1.ManagedAnnotationsAnnotation)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cp.GetName()}}
	if existing != nil {
		ns = existing.DeepCopy()
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	for _, k := range splitKeys(ns.Annotations[workv1alpha1.ManagedLabelsAnnotation]) {
		if _, ok := wantLabels[k]; !ok {
			delete(ns.Labels, k)
		}
	}
	for _, k := range splitKeys(ns.Annotations[workv1alpha1.ManagedAnnotationsAnnotation]) {
		if _, ok := wantAnnotations[k]; !ok {
			delete(ns.Annotations, k)
		}
	}
	maps.Copy(ns.Labels, wantLabels)
	maps.Copy(ns.Annotations, wantAnnotations)
	ns.Annotations[workv1alpha1.ManagedLabelsAnnotation] = joinKeys(wantLabels)
	ns.Annotations[workv1alpha1.ManagedAnnotationsAnnotation] = joinKeys(wantAnnotations,
		workv1alpha1.ManagedLabelsAnnotation, workv1alpha1.ManagedAnnotationsAnnotation)

	if existing == nil {
		return ns, true
	}
	changed := !maps.Equal(existing.Labels, ns.Labels) || !maps.Equal(existing.Annotations, ns.Annotations)
	return ns, changed
}

// joinKeys lists the keys of m and extra, sorted, comma-separated.
func joinKeys(m map[string]string, extra ...string) string {
	keys := slices.AppendSeq(extra, maps.Keys(m))
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), ",")
}

func splitKeys(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// managedByControlPlane: the member's namespace was made or adopted by the
// control plane, so the control plane may delete it.
func managedByControlPlane(ns *corev1.Namespace) bool {
	return ns.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
}
