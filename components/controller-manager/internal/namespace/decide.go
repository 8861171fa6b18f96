package namespace

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// namespaceKind names the kind in Work names and manifests.
const namespaceKind = "Namespace"

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

// claimedByPolicy: a ClusterPropagationPolicy claimed the namespace, so its
// ClusterResourceBinding carries it to the clusters the policy chose.
func claimedByPolicy(labels map[string]string) bool {
	return labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != ""
}

// plan is what one reconcile does with a namespace's Works.
type plan struct {
	// propagate: every Cluster gets a Work; otherwise none does.
	propagate bool
	// handOver: the Works that are no longer wanted are released (this
	// controller's label removed) rather than deleted. A policy's binding
	// writes Works of the same names and takes them over in place, so the
	// member namespaces, and everything in them, survive the change of
	// owner instead of being deleted and made again.
	handOver bool
	// hold: the Works stay as they are. A namespace being deleted keeps
	// them until it is gone, as in Karmada: by then the templates in it,
	// their bindings and so their Works are gone or going, so the member
	// namespace is not deleted under Works that would put objects back in
	// it.
	hold bool
}

// decide plans for the namespace called name; ns is nil when it does not
// exist.
func decide(name string, ns metav1.Object, skipped []*regexp.Regexp) plan {
	switch {
	case ns == nil:
		return plan{}
	case ns.GetDeletionTimestamp() != nil:
		return plan{hold: true}
	case !propagatable(name, skipped), optedOut(ns.GetLabels()):
		return plan{}
	case claimedByPolicy(ns.GetLabels()):
		return plan{handOver: true}
	}
	return plan{propagate: true}
}

// targetClusters are the Clusters that get a Work: every one
// not being deleted, whatever its sync mode or health, as in Karmada (the
// execution controller or the agent applies the Work once it can). A
// Cluster being deleted has its Works removed by the cluster controller; a
// Work written now would hold its removal up.
func targetClusters(clusters []clusterv1alpha1.Cluster) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, 0, len(clusters))
	for i := range clusters {
		if clusters[i].DeletionTimestamp.IsZero() {
			out = append(out, &clusters[i])
		}
	}
	return out
}

func clusterNames(clusters []*clusterv1alpha1.Cluster) []string {
	out := make([]string, len(clusters))
	for i, c := range clusters {
		out[i] = c.Name
	}
	return out
}

// ownedByBinding: a binding took the Work over (it carries a binding's
// permanent id), so it is that binding's from now on.
func ownedByBinding(w *workv1alpha1.Work) bool {
	return w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != "" ||
		w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != ""
}

// unwanted sorts this controller's existing Works of one namespace that
// have no place in targets: those to delete, and those to release, because
// the plan hands them over or a binding already took them over. Works
// being deleted are left to finish.
func unwanted(works []workv1alpha1.Work, targets []string, p plan) (del, release []*workv1alpha1.Work) {
	for i := range works {
		w := &works[i]
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		cluster, inExecutionSpace := names.ClusterOfExecutionSpace(w.Namespace)
		byBinding := ownedByBinding(w)
		switch {
		case inExecutionSpace && slices.Contains(targets, cluster) && !byBinding:
			// Wanted; the sync keeps it up to date.
		case p.handOver || byBinding:
			release = append(release, w)
		default:
			del = append(del, w)
		}
	}
	return del, release
}

// workName is the name of a namespace's Works, the one a
// ClusterResourceBinding of the namespace gives its Works too.
func workName(namespace string) string {
	return names.Work("", namespace, namespaceKind)
}

// namespaceOfWork inverts workName: the name of the namespace whose Works
// are called work. Namespace names are lower case and have no colon, so the
// Work name is the namespace name, a dash, and a hash without dashes.
func namespaceOfWork(work string) (string, bool) {
	i := strings.LastIndexByte(work, '-')
	if i <= 0 {
		return "", false
	}
	ns := work[:i]
	return ns, workName(ns) == work
}

// namespaceManifest is the namespace as members get it, before overrides:
// its name, labels and annotations. Everything else of a Namespace is the
// API server's (uid, resourceVersion, creationTimestamp, managedFields,
// spec.finalizers, status) and means nothing in a member. The
// kubernetes.io/metadata.name label is set by each API server on its own
// namespaces, and the managed-labels and managed-annotations records are
// the control plane's own bookkeeping, remade for each manifest.
func namespaceManifest(ns metav1.Object) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(corev1.SchemeGroupVersion.String())
	obj.SetKind(namespaceKind)
	obj.SetName(ns.GetName())
	labels := maps.Clone(ns.GetLabels())
	delete(labels, corev1.LabelMetadataName)
	if len(labels) > 0 {
		obj.SetLabels(labels)
	}
	annotations := maps.Clone(ns.GetAnnotations())
	delete(annotations, workv1alpha1.ManagedLabelsAnnotation)
	delete(annotations, workv1alpha1.ManagedAnnotationsAnnotation)
	if len(annotations) > 0 {
		obj.SetAnnotations(annotations)
	}
	return obj
}

// checkRendered refuses a manifest that overrides turned into another
// object: the Work's name says which namespace it carries.
func checkRendered(obj *unstructured.Unstructured, name string) error {
	switch {
	case obj.GetAPIVersion() != corev1.SchemeGroupVersion.String() || obj.GetKind() != namespaceKind:
		return fmt.Errorf("overrides changed apiVersion/kind to %s/%s; a namespace must stay a v1 Namespace", obj.GetAPIVersion(), obj.GetKind())
	case obj.GetName() != name:
		return fmt.Errorf("overrides changed metadata.name to %q; a namespace cannot be renamed per cluster", obj.GetName())
	case obj.GetNamespace() != "":
		return fmt.Errorf("overrides set metadata.namespace to %q on a cluster-scoped Namespace", obj.GetNamespace())
	}
	return nil
}

// workIdentity is what a manifest carries about its Work.
type workIdentity struct {
	namespace, name, id string
}

// decorate adds the labels and annotations of the Karmada wire interface to
// a rendered manifest, as the binding controller does for templates, and
// returns its conflict resolution: the namespace's own
// work.karmada.io/conflict-resolution annotation when valid, else abort, so
// that a namespace a member made itself is never taken over, and so never
// deleted, unless asked. The managed records list every label and
// annotation key the manifest has.
func decorate(obj *unstructured.Unstructured, namespaceUID string, work workIdentity) string {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	cr := workv1alpha1.ConflictResolutionAbort
	if v := annotations[workv1alpha1.ConflictResolutionAnnotation]; v == workv1alpha1.ConflictResolutionOverwrite {
		cr = v
	}
	annotations[workv1alpha1.ConflictResolutionAnnotation] = cr
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	if namespaceUID != "" {
		annotations[workv1alpha1.ResourceTemplateUIDAnnotation] = namespaceUID
	}
	annotations[workv1alpha1.WorkNamespaceAnnotation] = work.namespace
	annotations[workv1alpha1.WorkNameAnnotation] = work.name
	if work.id != "" {
		labels[workv1alpha1.WorkPermanentIDLabel] = work.id
	}
	annotations[workv1alpha1.ManagedAnnotationsAnnotation] = joinKeys(annotations,
		workv1alpha1.ManagedAnnotationsAnnotation, workv1alpha1.ManagedLabelsAnnotation)
	annotations[workv1alpha1.ManagedLabelsAnnotation] = joinKeys(labels)
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	return cr
}

// joinKeys lists the keys of m and extra, sorted, once each,
// comma-separated.
func joinKeys(m map[string]string, extra ...string) string {
	keys := slices.AppendSeq(slices.Clone(extra), maps.Keys(m))
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), ",")
}

// desiredWork is what a namespace's Work for one cluster should hold.
type desiredWork struct {
	namespace, name string
	// labels and annotations are set on the Work; others it has are kept,
	// except dropAnnotations.
	labels, annotations map[string]string
	dropAnnotations     []string
	// owner is the namespace: the garbage collector removes the Work with
	// it even if this controller is down when the namespace goes.
	owner metav1.OwnerReference
	// manifest is the rendered namespace as canonical JSON.
	manifest []byte
}

// buildWork assembles the Work of one cluster from its rendered and
// decorated manifest. The Work carries, as the binding controller's do,
// its permanent id, the conflict resolution and the applied-overrides
// records, plus ManagedByLabel so that this controller finds its Works.
func buildWork(ns metav1.Object, manifest *unstructured.Unstructured, conflictResolution string, work workIdentity) (*desiredWork, error) {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding manifest: %w", err)
	}
	d := &desiredWork{
		namespace: work.namespace,
		name:      work.name,
		labels: map[string]string{
			ManagedByLabel:                    ControllerName,
			workv1alpha1.WorkPermanentIDLabel: work.id,
		},
		annotations: map[string]string{workv1alpha1.ConflictResolutionAnnotation: conflictResolution},
		owner: metav1.OwnerReference{
			APIVersion: corev1.SchemeGroupVersion.String(),
			Kind:       namespaceKind,
			Name:       ns.GetName(),
			UID:        ns.GetUID(),
		},
		manifest: raw,
	}
	applied := manifest.GetAnnotations()
	// Namespaces get ClusterOverridePolicies only; the other record is
	// dropped should anyone have set it.
	for _, k := range []string{policyv1alpha1.AppliedClusterOverrides, policyv1alpha1.AppliedOverrides} {
		if v, ok := applied[k]; ok && k == policyv1alpha1.AppliedClusterOverrides {
			d.annotations[k] = v
		} else {
			d.dropAnnotations = append(d.dropAnnotations, k)
		}
	}
	return d, nil
}

// newWork is the Work to create. It starts with the execution controller's
// finalizer, so that it can never go before the member namespace is
// removed, even if deleted before the execution controller first sees it.
func (d *desiredWork) newWork() *workv1alpha1.Work {
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       d.namespace,
			Name:            d.name,
			Labels:          maps.Clone(d.labels),
			Annotations:     maps.Clone(d.annotations),
			Finalizers:      []string{workv1alpha1.ExecutionControllerFinalizer},
			OwnerReferences: []metav1.OwnerReference{d.owner},
		},
	}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: d.manifest}}}
	return w
}

// upToDate tells whether existing already holds everything d asks for, in
// which case the Work is not written.
func (d *desiredWork) upToDate(existing *workv1alpha1.Work) bool {
	if !containsAll(existing.Labels, d.labels) || !containsAll(existing.Annotations, d.annotations) ||
		containsAny(existing.Annotations, d.dropAnnotations) ||
		!slices.Contains(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer) ||
		!slices.ContainsFunc(existing.OwnerReferences, d.isOwner) ||
		len(existing.Spec.Workload.Manifests) != 1 {
		return false
	}
	same, err := workcache.SameManifest(existing, 0, d.manifest)
	return err == nil && same
}

// isOwner: ref is the owner reference d asks for.
func (d *desiredWork) isOwner(ref metav1.OwnerReference) bool {
	return ref.UID == d.owner.UID && ref.Kind == d.owner.Kind && ref.APIVersion == d.owner.APIVersion && ref.Name == d.owner.Name
}

// apply makes existing hold what d asks for. Its other labels, annotations,
// finalizers and owners are kept, except references to an earlier
// namespace of the same name, and so is the rest of its spec (a user may
// suspend dispatching).
func (d *desiredWork) apply(existing *workv1alpha1.Work) {
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	maps.Copy(existing.Labels, d.labels)
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	for _, k := range d.dropAnnotations {
		delete(existing.Annotations, k)
	}
	maps.Copy(existing.Annotations, d.annotations)
	if !slices.Contains(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		existing.Finalizers = append(existing.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	}
	existing.OwnerReferences = slices.DeleteFunc(existing.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return ref.APIVersion == d.owner.APIVersion && ref.Kind == d.owner.Kind && ref.Name == d.owner.Name
	})
	existing.OwnerReferences = append(existing.OwnerReferences, d.owner)
	existing.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: d.manifest}}}
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
