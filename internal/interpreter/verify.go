package interpreter

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// ErrInvalidResult is wrapped by errors about answers that cannot be used:
// a negative replica count, an object that is not the one asked about, a
// dependency without a kind.
var ErrInvalidResult = errors.New("invalid interpreter result")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidResult, fmt.Sprintf(format, args...))
}

func checkReplicas(replicas int32) error {
	if replicas < 0 {
		return invalid("replicas %d is negative", replicas)
	}
	return nil
}

func checkComponents(components []workv1alpha2.Component) error {
	seen := make(map[string]bool, len(components))
	for i, c := range components {
		switch {
		case c.Name == "":
			return invalid("component #%d has no name", i+1)
		case seen[c.Name]:
			return invalid("component %q appears twice", c.Name)
		case c.Replicas < 0:
			return invalid("component %q has negative replicas %d", c.Name, c.Replicas)
		}
		seen[c.Name] = true
	}
	return nil
}

// identity is what a revised, retained or aggregated object must keep.
type identity struct {
	apiVersion, kind, namespace, name string
}

func identify(obj *unstructured.Unstructured) identity {
	return identity{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()}
}

func (id identity) check(obj *unstructured.Unstructured) error {
	if obj == nil || obj.Object == nil {
		return invalid("no object returned")
	}
	got := identify(obj)
	if got != id {
		return invalid("returned %s %s %s/%s, want %s %s %s/%s (the object asked about)",
			got.apiVersion, got.kind, got.namespace, got.name, id.apiVersion, id.kind, id.namespace, id.name)
	}
	return nil
}

// normalizeDependencies checks each reference, then sorts them and drops
// duplicates so that callers compare dependency lists cheaply.
func normalizeDependencies(deps []configv1alpha1.DependentObjectReference) ([]configv1alpha1.DependentObjectReference, error) {
	for i, d := range deps {
		switch {
		case d.APIVersion == "":
			return nil, invalid("dependency #%d has no apiVersion", i+1)
		case d.Kind == "":
			return nil, invalid("dependency #%d has no kind", i+1)
		case d.Name == "" && d.LabelSelector == nil:
			return nil, invalid("dependency #%d (%s) has neither name nor labelSelector", i+1, d.Kind)
		}
	}
	out := slices.Clone(deps)
	slices.SortStableFunc(out, compareDependencies)
	return slices.CompactFunc(out, func(a, b configv1alpha1.DependentObjectReference) bool {
		return compareDependencies(a, b) == 0
	}), nil
}

func compareDependencies(a, b configv1alpha1.DependentObjectReference) int {
	return cmp.Or(
		cmp.Compare(a.APIVersion, b.APIVersion),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(selectorString(a.LabelSelector), selectorString(b.LabelSelector)),
	)
}

func selectorString(s *metav1.LabelSelector) string {
	if s == nil {
		return ""
	}
	return metav1.FormatLabelSelector(s)
}
