package dependencies

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ManagedBy is the value of binding.karmada.io/managed-by on the attached
// bindings the distributor creates.
const ManagedBy = ControllerName

// DependedByLabelPrefix starts the label that ties an attached binding to
// one of its dependent bindings; the value is that binding's permanent id.
const DependedByLabelPrefix = "resourcebinding.karmada.io/depended-by-"

// DependedByLabel is the label key naming the dependent binding namespace/name
// on its attached bindings: the prefix and a hash of "namespace/name", short
// enough for a label key whatever the names.
func DependedByLabel(namespace, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	return DependedByLabelPrefix + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// dependent is what the attached bindings need of a dependent binding: a
// ResourceBinding, or a ClusterResourceBinding (namespace empty).
type dependent struct {
	namespace, name string
	// id is the binding's permanent id, the value of its depended-by label.
	id       string
	clusters []workv1alpha2.TargetCluster
	voice    voice
}

func dependentOf(meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec) dependent {
	idLabel := workv1alpha2.ResourceBindingPermanentIDLabel
	if meta.Namespace == "" {
		idLabel = workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return dependent{
		namespace: meta.Namespace,
		name:      meta.Name,
		id:        meta.Labels[idLabel],
		clusters:  spec.Clusters,
		voice:     voiceOf(meta, spec),
	}
}

func (d dependent) snapshot() workv1alpha2.BindingSnapshot {
	return workv1alpha2.BindingSnapshot{Namespace: d.namespace, Name: d.name, Clusters: slices.Clone(d.clusters)}
}

// settings are the binding fields an attached binding takes from the
// bindings that require it.
type settings struct {
	overwrite bool
	preserve  bool
}

func settingsOf(spec *workv1alpha2.ResourceBindingSpec) settings {
	return settings{
		overwrite: spec.ConflictResolution == policyv1alpha1.ConflictOverwrite,
		preserve:  ptr.Deref(spec.PreserveResourcesOnDeletion, false),
	}
}

// voice is what one binding requiring an attached binding has to say of
// its settings.
type voice struct {
	settings
	// claimed: a policy claims the binding. A binding released by its
	// policy's deletion keeps its entry, its clusters still need the
	// dependency, but its settings are those of a policy that is gone: they
	// count only while no claimed binding requires the attached one.
	claimed bool
}

func voiceOf(meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec) voice {
	l := meta.Labels
	return voice{
		settings: settingsOf(spec),
		claimed:  l[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "" || l[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != "",
	}
}

// heard are the settings of the voices that count: the claimed bindings',
// all when none is claimed.
func heard(voices []voice) []settings {
	out := make([]settings, 0, len(voices))
	for _, v := range voices {
		if v.claimed {
			out = append(out, v.settings)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, v := range voices {
		out = append(out, v.settings)
	}
	return out
}

// The conflicts resolve reports, as Karmada words them.
const (
	conflictResolutionConflict = "ConflictResolution conflicted (Overwrite vs Abort)"
	preserveConflict           = "PreserveResourcesOnDeletion conflicted (true vs false)"
)

// resolve merges the settings of several bindings as Karmada does: any
// Overwrite makes Overwrite, any preservation preserves. conflicts describe
// the fields the bindings disagree on.
func resolve(all []settings) (merged settings, conflicts []string) {
	var overwrite, abort, preserve, remove bool
	for _, s := range all {
		overwrite, abort = overwrite || s.overwrite, abort || !s.overwrite
		preserve, remove = preserve || s.preserve, remove || !s.preserve
	}
	if overwrite && abort {
		conflicts = append(conflicts, conflictResolutionConflict)
	}
	if preserve && remove {
		conflicts = append(conflicts, preserveConflict)
	}
	return settings{overwrite: overwrite, preserve: preserve}, conflicts
}

// applySettings writes s into spec and reports whether it changed. Abort
// and no preservation are stored as the API's defaults, so that what the
// server returns compares equal.
func applySettings(spec *workv1alpha2.ResourceBindingSpec, s settings) bool {
	if settingsOf(spec) == s && spec.ConflictResolution != "" {
		return false
	}
	spec.ConflictResolution = policyv1alpha1.ConflictAbort
	if s.overwrite {
		spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	}
	spec.PreserveResourcesOnDeletion = nil
	if s.preserve {
		spec.PreserveResourcesOnDeletion = ptr.To(true)
	}
	return true
}

// dependency is one existing object a dependent binding needs.
type dependency struct {
	ref workv1alpha2.ObjectReference
}

// bindingKey is where the attached binding of the dependency lives.
func (d dependency) bindingName() string {
	return names.Binding(d.ref.Name, d.ref.Kind)
}

// ownerRef is the dependency as the controller of its attached binding,
// exactly as the detector writes a template's owner, so that a policy
// claiming the dependency later keeps the binding.
func (d dependency) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         d.ref.APIVersion,
		Kind:               d.ref.Kind,
		Name:               d.ref.Name,
		UID:                d.ref.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// newAttached is the attached binding the distributor creates for dep,
// required by d alone so far. id is its own permanent id.
func newAttached(d dependent, dep dependency, id string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: dep.ref.Namespace,
			Name:      dep.bindingName(),
			Labels: map[string]string{
				workv1alpha2.BindingManagedByLabel:           ManagedBy,
				workv1alpha2.ResourceBindingPermanentIDLabel: id,
				DependedByLabel(d.namespace, d.name):         d.id,
			},
			OwnerReferences: []metav1.OwnerReference{dep.ownerRef()},
			// Added here to save the binding controller a write.
			Finalizers: []string{workv1alpha2.BindingControllerFinalizer},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:   dep.ref,
			RequiredBy: []workv1alpha2.BindingSnapshot{d.snapshot()},
		},
	}
	applySettings(&rb.Spec, d.voice.settings)
	return rb
}

// ownedByDistributor tells whether the distributor created the binding and
// no policy has claimed it since: only then does the distributor set its
// resource and settings, and delete it when nothing requires it.
func ownedByDistributor(rb *workv1alpha2.ResourceBinding) bool {
	l := rb.Labels
	return l[workv1alpha2.BindingManagedByLabel] == ManagedBy && rb.Spec.Placement == nil &&
		l[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" && l[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == ""
}

// withSnapshot returns requiredBy with s as the entry of its binding,
// replacing an earlier one, and whether that changed anything.
func withSnapshot(requiredBy []workv1alpha2.BindingSnapshot, s workv1alpha2.BindingSnapshot) ([]workv1alpha2.BindingSnapshot, bool) {
	same := func(r workv1alpha2.BindingSnapshot) bool { return r.Namespace == s.Namespace && r.Name == s.Name }
	i := slices.IndexFunc(requiredBy, same)
	if i < 0 {
		return append(slices.Clone(requiredBy), s), true
	}
	out := slices.Clone(requiredBy)
	out[i] = s
	// Later duplicates of the entry, which no writer makes, go.
	out = append(out[:i+1], slices.DeleteFunc(out[i+1:], same)...)
	if len(out) == len(requiredBy) && equality.Semantic.DeepEqual(requiredBy[i], s) {
		return requiredBy, false
	}
	return out, true
}

// withoutSnapshot returns requiredBy without the entries of the binding
// namespace/name, and whether there were any.
func withoutSnapshot(requiredBy []workv1alpha2.BindingSnapshot, namespace, name string) ([]workv1alpha2.BindingSnapshot, bool) {
	out := slices.DeleteFunc(slices.Clone(requiredBy), func(r workv1alpha2.BindingSnapshot) bool {
		return r.Namespace == namespace && r.Name == name
	})
	if len(out) == len(requiredBy) {
		return requiredBy, false
	}
	if len(out) == 0 {
		return nil, true
	}
	return out, true
}

// attach makes an existing binding of dep required by d: the requiredBy
// entry and the depended-by label, and, when the distributor owns it, the
// reference to the dependency's current version and the settings resolved
// over d and others (the other bindings requiring it). It reports whether
// rb changed and the settings conflicts to report.
func attach(rb *workv1alpha2.ResourceBinding, d dependent, dep dependency, others []voice) (changed bool, conflicts []string) {
	rb.Spec.RequiredBy, changed = withSnapshot(rb.Spec.RequiredBy, d.snapshot())
	key := DependedByLabel(d.namespace, d.name)
	if rb.Labels[key] != d.id {
		if rb.Labels == nil {
			rb.Labels = map[string]string{}
		}
		rb.Labels[key] = d.id
		changed = true
	}
	all := heard(append(slices.Clone(others), d.voice))
	if !ownedByDistributor(rb) {
		// The dependency's own policy decides; its settings only take part
		// in the conflict check.
		_, conflicts = resolve(append(all, settingsOf(&rb.Spec)))
		return changed, conflicts
	}
	if !equality.Semantic.DeepEqual(rb.Spec.Resource, dep.ref) {
		rb.Spec.Resource = dep.ref
		changed = true
	}
	merged, conflicts := resolve(all)
	if applySettings(&rb.Spec, merged) {
		changed = true
	}
	return changed, conflicts
}

// detach removes the dependent binding namespace/name from rb. remaining
// are the voices of the bindings that still require it. It reports
// whether rb changed and whether it is to be deleted: the distributor owns
// it and nothing requires it any more.
func detach(rb *workv1alpha2.ResourceBinding, namespace, name string, remaining []voice) (changed, deleteIt bool) {
	rb.Spec.RequiredBy, changed = withoutSnapshot(rb.Spec.RequiredBy, namespace, name)
	if key := DependedByLabel(namespace, name); hasKey(rb.Labels, key) {
		delete(rb.Labels, key)
		changed = true
	}
	if !ownedByDistributor(rb) {
		return changed, false
	}
	if len(rb.Spec.RequiredBy) == 0 {
		return changed, true
	}
	if len(remaining) > 0 {
		merged, _ := resolve(heard(remaining))
		if applySettings(&rb.Spec, merged) {
			changed = true
		}
	}
	return changed, false
}

// attachedTo tells whether rb is attached to the dependent binding
// namespace/name with permanent id (empty when unknown): listed in its
// requiredBy, or labelled with its id.
func attachedTo(rb *workv1alpha2.ResourceBinding, namespace, name, id string) bool {
	if id != "" && rb.Labels[DependedByLabel(namespace, name)] == id {
		return true
	}
	return slices.ContainsFunc(rb.Spec.RequiredBy, func(s workv1alpha2.BindingSnapshot) bool {
		return s.Namespace == namespace && s.Name == name
	})
}

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

// dependedByKeys are the depended-by label keys of a binding, for the index.
func dependedByKeys(labels map[string]string) []string {
	var out []string
	for k := range labels {
		if strings.HasPrefix(k, DependedByLabelPrefix) {
			out = append(out, k)
		}
	}
	return out
}
