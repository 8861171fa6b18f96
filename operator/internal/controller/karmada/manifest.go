package karmada

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// releaseManifest is the objects of a release, as rendered.
type releaseManifest struct {
	objects []*unstructured.Unstructured
}

type workloadRef struct{ kind, name string }

func parseManifest(manifest string) (*releaseManifest, error) {
	m := &releaseManifest{}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return m, nil
			}
			return nil, fmt.Errorf("reading a release's manifest: %w", err)
		}
		if len(obj) > 0 {
			m.objects = append(m.objects, &unstructured.Unstructured{Object: obj})
		}
	}
}

// workloads are the release's Deployments and StatefulSets, whose rollout
// gates its phase.
func (m *releaseManifest) workloads() []workloadRef {
	var out []workloadRef
	for _, o := range m.objects {
		if o.GroupVersionKind().Group == "apps" && (o.GetKind() == "Deployment" || o.GetKind() == "StatefulSet") {
			out = append(out, workloadRef{kind: o.GetKind(), name: o.GetName()})
		}
	}
	return out
}

// drift compares each object of a release's manifest with the one in the
// cluster, and describes the first difference: an object missing, or a
// field the chart sets that holds another value. Fields the chart does not
// set (defaults, status, other controllers' fields) are not compared.
func (r *Reconciler) drift(ctx context.Context, namespace, manifest string) (string, error) {
	m, err := parseManifest(manifest)
	if err != nil {
		return "", err
	}
	for _, want := range m.objects {
		gvk := want.GroupVersionKind()
		typed, err := r.Scheme().New(gvk)
		if err != nil {
			// A kind the operator does not watch is not checked.
			continue
		}
		live := typed.(client.Object)
		ns := want.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		err = r.Get(ctx, types.NamespacedName{Namespace: ns, Name: want.GetName()}, live)
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("%s %s was deleted", gvk.Kind, want.GetName()), nil
		}
		if err != nil {
			return "", fmt.Errorf("reading %s %s: %w", gvk.Kind, want.GetName(), err)
		}
		have, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
		if err != nil {
			return "", err
		}
		if path, ok := contains(have, want.Object, ""); !ok {
			return fmt.Sprintf("%s %s: %s was changed", gvk.Kind, want.GetName(), path), nil
		}
	}
	return "", nil
}

// contains reports whether have holds every value of want: maps by key,
// lists element by element with the same length, quantities by value. It
// returns the path of the first difference.
func contains(have, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return path, false
		}
		for _, k := range sortedKeys(w) {
			if p, ok := contains(h[k], w[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return path, len(w) == 0 && len(h) == 0
		}
		for i := range w {
			if p, ok := contains(h[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case string:
		if h, ok := have.(string); ok && (h == w || sameQuantity(h, w)) {
			return "", true
		}
		return path, false
	case nil:
		// A null in the manifest asks for nothing.
		return "", true
	}
	if sameNumber(have, want) || equality.Semantic.DeepEqual(have, want) || reflect.DeepEqual(have, want) {
		return "", true
	}
	return path, false
}

func sameQuantity(a, b string) bool {
	qa, errA := resource.ParseQuantity(a)
	qb, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}

// sameNumber compares numbers decoded from YAML (float64 or int64) with
// those converted from typed objects (int64).
func sameNumber(a, b any) bool {
	fa, okA := number(a)
	fb, okB := number(b)
	return okA && okB && fa == fb
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
