package execution

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// ManifestHashAnnotation on a member object is the hash of the desired
// object last applied from its Work. It tells a changed manifest apart from
// an unchanged one without comparing whole objects, and lets a field the
// manifest dropped be removed (a subset comparison cannot see that).
const ManifestHashAnnotation = "work.flotilla.io/manifest-hash"

// flotillaMetadata are the labels and annotations this controller puts on
// member objects, or that tie them to a Work or a template; they are removed
// when a Work releases an object it preserves.
var (
	flotillaLabels = []string{
		workv1alpha1.WorkPermanentIDLabel,
		workv1alpha1.ManagedByKarmadaLabel,
	}
	flotillaAnnotations = []string{
		workv1alpha1.WorkNamespaceAnnotation,
		workv1alpha1.WorkNameAnnotation,
		ManifestHashAnnotation,
		workv1alpha1.ManagedLabelsAnnotation,
		workv1alpha1.ManagedAnnotationsAnnotation,
		workv1alpha1.ResourceTemplateUIDAnnotation,
		workv1alpha1.ResourceTemplateGenerationAnnotation,
	}
)

// ErrInvalidManifest marks (wrapped) a manifest that cannot be decoded into
// an object: nothing was ever applied from it.
var ErrInvalidManifest = errors.New("invalid manifest")

// NothingApplied reports whether an error of Targets means that nothing
// can exist in the member for that manifest: it is invalid, or the member
// does not serve its kind. Other errors (discovery failing) are transient.
func NothingApplied(err error) bool {
	return errors.Is(err, ErrInvalidManifest) || meta.IsNoMatchError(err)
}

// Target is one manifest of a Work as it should be in the member.
type Target struct {
	// Ordinal is the manifest's index in spec.workload.manifests.
	Ordinal int
	// Desired is the object to apply: the manifest without server-set
	// fields, stamped with the Work's identity and Hash.
	Desired *unstructured.Unstructured
	// Hash identifies Desired; it is in its ManifestHashAnnotation.
	Hash string
	// Mapping is the member's resource for Desired's kind.
	Mapping *meta.RESTMapping
}

// Identifier names the target in Work.status.manifestStatuses.
func (t Target) Identifier() workv1alpha1.ResourceIdentifier {
	gvk := t.Desired.GroupVersionKind()
	return workv1alpha1.ResourceIdentifier{
		Ordinal:   t.Ordinal,
		Group:     gvk.Group,
		Version:   gvk.Version,
		Kind:      gvk.Kind,
		Resource:  t.Mapping.Resource.Resource,
		Namespace: t.Desired.GetNamespace(),
		Name:      t.Desired.GetName(),
	}
}

// Key is the object's cache key: namespace/name, or name when
// cluster-scoped.
func (t Target) Key() string {
	if ns := t.Desired.GetNamespace(); ns != "" {
		return ns + "/" + t.Desired.GetName()
	}
	return t.Desired.GetName()
}

// String describes the target for messages: Kind namespace/name.
func (t Target) String() string {
	return t.Desired.GetKind() + " " + t.Key()
}

// ManifestError is a manifest that could not be turned into a Target.
type ManifestError struct {
	Ordinal int
	Err     error
}

func (e *ManifestError) Error() string { return fmt.Sprintf("manifest %d: %v", e.Ordinal, e.Err) }
func (e *ManifestError) Unwrap() error { return e.Err }

// Targets resolves every manifest of work against the member's REST mapper.
// A manifest that cannot be decoded or mapped yields a *ManifestError, and
// the others are still returned.
func Targets(work *workv1alpha1.Work, mapper meta.RESTMapper) ([]Target, []error) {
	manifests := work.Spec.Workload.Manifests
	targets := make([]Target, 0, len(manifests))
	var errs []error
	for i, m := range manifests {
		desired, hash, err := DesiredObject(work, m.Raw)
		if err == nil {
			var t Target
			t, err = target(i, desired, hash, mapper)
			if err == nil {
				targets = append(targets, t)
				continue
			}
		}
		errs = append(errs, &ManifestError{Ordinal: i, Err: err})
	}
	return targets, errs
}

func target(ordinal int, desired *unstructured.Unstructured, hash string, mapper meta.RESTMapper) (Target, error) {
	gvk := desired.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Target{}, fmt.Errorf("resolving %s in the member: %w", gvk, err)
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespaced && desired.GetNamespace() == "":
		return Target{}, fmt.Errorf("%s %s is namespaced but has no namespace", gvk.Kind, desired.GetName())
	case !namespaced && desired.GetNamespace() != "":
		return Target{}, fmt.Errorf("%s %s is cluster-scoped but has namespace %s", gvk.Kind, desired.GetName(), desired.GetNamespace())
	}
	return Target{Ordinal: ordinal, Desired: desired, Hash: hash, Mapping: mapping}, nil
}

// DesiredObject decodes a manifest into the object to apply in the member:
// without the fields the control plane's API server set (they mean nothing
// in the member, and owner references would get it garbage collected
// there) nor status (the member's own), with the labels and annotations
// that tie it to work, and with the hash of all that.
func DesiredObject(work *workv1alpha1.Work, raw []byte) (*unstructured.Unstructured, string, error) {
	if len(raw) == 0 {
		return nil, "", fmt.Errorf("%w: empty", ErrInvalidManifest)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidManifest, err)
	}
	if obj.GetName() == "" {
		return nil, "", fmt.Errorf("%w: %s has no name", ErrInvalidManifest, obj.GetKind())
	}
	metadata, ok := obj.Object["metadata"].(map[string]any)
	if ok {
		for _, f := range []string{
			"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
			"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
		} {
			delete(metadata, f)
		}
	}
	delete(obj.Object, "status")

	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	if id := work.Labels[workv1alpha1.WorkPermanentIDLabel]; id != "" {
		labels[workv1alpha1.WorkPermanentIDLabel] = id
	}
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workv1alpha1.WorkNamespaceAnnotation] = work.Namespace
	annotations[workv1alpha1.WorkNameAnnotation] = work.Name
	delete(annotations, ManifestHashAnnotation)
	obj.SetAnnotations(annotations)

	hash, err := hashObject(obj)
	if err != nil {
		return nil, "", err
	}
	annotations[ManifestHashAnnotation] = hash
	obj.SetAnnotations(annotations)
	return obj, hash, nil
}

// hashObject hashes the canonical JSON of obj (encoding/json sorts map
// keys).
func hashObject(obj *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("hashing manifest: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}
