package binding

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/overrides"
)

// identity is what the manifests of one binding carry about where they come
// from, the same for every cluster.
type identity struct {
	// bindingIDLabel and bindingID link the manifest (and the member object)
	// to the binding.
	bindingIDLabel, bindingID string
	// bindingAnnotations name the binding.
	bindingAnnotations map[string]string
	templateUID        string
	templateGeneration int64
	conflictResolution policyv1alpha1.ConflictResolution
}

// workIdentity is what a manifest carries about its Work.
type workIdentity struct {
	namespace, name, id string
}

// rendered is one cluster's manifest and what rendering it involved.
type rendered struct {
	manifest *unstructured.Unstructured
	// conflictResolution is the manifest's conflict-resolution annotation,
	// also put on the Work.
	conflictResolution string
	// matches are the override rules applied, in order.
	matches []overrides.Match
}

// overrideError is an override policy that could not be applied: the user's
// to fix, so it is reported and not retried.
type overrideError struct{ err error }

func (e *overrideError) Error() string { return e.err.Error() }
func (e *overrideError) Unwrap() error { return e.err }

// render produces the manifest of one cluster from base, the pruned
// template (which is not changed): replicas revised, completions split,
// overrides applied, then the wire labels and annotations added.
func render(ctx context.Context, interp interpreter.Interpreter, ops overrideApplier,
	base *unstructured.Unstructured, t target, cluster *clusterv1alpha1.Cluster, id identity, work workIdentity,
) (*rendered, error) {
	obj := base.DeepCopy()
	if t.replicas != nil {
		revised, err := interp.ReviseReplica(ctx, obj, *t.replicas)
		if err != nil {
			return nil, fmt.Errorf("revising replicas to %d: %w", *t.replicas, err)
		}
		obj = revised
	}
	if t.completions != nil {
		if err := unstructured.SetNestedField(obj.Object, *t.completions, "spec", "completions"); err != nil {
			return nil, fmt.Errorf("setting completions: %w", err)
		}
	}
	if len(t.labels) > 0 {
		labels := obj.GetLabels()
		if labels == nil {
			labels = make(map[string]string, len(t.labels))
		}
		maps.Copy(labels, t.labels)
		obj.SetLabels(labels)
	}
	out, matches, err := ops.Apply(obj, cluster)
	if err != nil {
		return nil, &overrideError{err: err}
	}
	cr := decorate(out, id, work)
	return &rendered{manifest: out, conflictResolution: cr, matches: matches}, nil
}

// decorate adds the labels and annotations of the Karmada wire interface to
// a rendered manifest and returns its conflict resolution. The managed
// records list every label and annotation key the manifest has, so the
// execution controller knows which keys of the member object are the
// control plane's.
func decorate(obj *unstructured.Unstructured, id identity, work workIdentity) string {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	if id.bindingID != "" {
		labels[id.bindingIDLabel] = id.bindingID
	}
	maps.Copy(annotations, id.bindingAnnotations)
	if id.templateGeneration > 0 {
		annotations[workv1alpha1.ResourceTemplateGenerationAnnotation] = strconv.FormatInt(id.templateGeneration, 10)
	}
	cr := conflictResolution(annotations, id.conflictResolution)
	annotations[workv1alpha1.ConflictResolutionAnnotation] = cr
	labels[workv1alpha1.ManagedByKarmadaLabel] = workv1alpha1.ManagedByKarmadaLabelValue
	if id.templateUID != "" {
		annotations[workv1alpha1.ResourceTemplateUIDAnnotation] = id.templateUID
	}
	annotations[workv1alpha1.WorkNamespaceAnnotation] = work.namespace
	annotations[workv1alpha1.WorkNameAnnotation] = work.name
	if work.id != "" {
		labels[workv1alpha1.WorkPermanentIDLabel] = work.id
	}
	annotations[workv1alpha1.ManagedAnnotationsAnnotation] = managedKeys(annotations,
		workv1alpha1.ManagedAnnotationsAnnotation, workv1alpha1.ManagedLabelsAnnotation)
	annotations[workv1alpha1.ManagedLabelsAnnotation] = managedKeys(labels)
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	return cr
}

// managedKeys joins, sorted and comma-separated, the keys of m and extra.
func managedKeys(m map[string]string, extra ...string) string {
	keys := slices.Collect(maps.Keys(m))
	for _, k := range extra {
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
