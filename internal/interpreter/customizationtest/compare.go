package customizationtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Exclude as the value of a field of an expected object leaves that field
// out of the comparison (timestamps, generated names).
const Exclude = "{{EXCLUDE}}"

// Compare checks got against the case's output. It returns a diff per
// output key that differs or is missing, and the result keys the case does
// not check.
func Compare(c *Case, got map[string]any) (diffs, unchecked []string) {
	for _, key := range outputKeys(c.Operation) {
		want, hasWant := c.Output[key]
		value, hasGot := got[key]
		switch {
		case !hasWant && hasGot:
			unchecked = append(unchecked, key)
			continue
		case !hasWant:
			continue
		case !hasGot && want != nil:
			diffs = append(diffs, fmt.Sprintf("%s: output %s: expected a value, the operation gave none", c.ID(), key))
			continue
		}
		w, g, err := normalize(key, want, value)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: output %s: %v", c.ID(), key, err))
			continue
		}
		if d := gocmp.Diff(w, g, quantitiesByValue); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s: output %s differs (-want +got):\n%s", c.ID(), key, d))
		}
	}
	return diffs, unchecked
}

// quantitiesByValue compares two different strings that both parse as
// quantities by their value, wherever they are ("2048m" equals "2.048",
// "1Gi" equals "1024Mi"): scripts and the people writing the expected
// output spell quantities in different ways, and nothing but the value
// matters to Kubernetes. Any other strings compare as they are.
var quantitiesByValue = gocmp.FilterValues(func(a, b string) bool {
	if a == b {
		return false
	}
	_, errA := resource.ParseQuantity(a)
	_, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil
}, gocmp.Comparer(func(a, b string) bool {
	qa, qb := resource.MustParse(a), resource.MustParse(b)
	return qa.Cmp(qb) == 0
}))

// normalize brings expected and actual values into comparable shape: typed
// results go through their Go types (so empty fields vanish; quantities
// compare by value everywhere, see quantitiesByValue), lists without a meaningful order are sorted, and
// excluded fields are dropped.
func normalize(key string, want, got any) (any, any, error) {
	switch key {
	case "requires":
		return viaType[workv1alpha2.ReplicaRequirements](want, got, nil)
	case "components":
		return viaType(want, got, func(l []workv1alpha2.Component) {
			slices.SortFunc(l, func(a, b workv1alpha2.Component) int { return cmp.Compare(a.Name, b.Name) })
		})
	case "dependencies":
		return viaType(want, got, func(l []configv1alpha1.DependentObjectReference) {
			slices.SortFunc(l, func(a, b configv1alpha1.DependentObjectReference) int {
				return cmp.Or(cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Kind, b.Kind),
					cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
			})
		})
	}
	w, err := generic(want)
	if err != nil {
		return nil, nil, err
	}
	g, err := generic(got)
	if err != nil {
		return nil, nil, err
	}
	excluded := map[string]bool{}
	w = exclude(w, nil, excluded, true)
	g = exclude(g, nil, excluded, false)
	return w, g, nil
}

// viaType decodes both values into T, sorts them with order if given, and
// encodes them back into generic values.
func viaType[T any](want, got any, order func(T)) (any, any, error) {
	conv := func(v any, what string) (any, error) {
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var t T
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, fmt.Errorf("%s value does not decode: %w", what, err)
		}
		if order != nil {
			order(t)
		}
		return generic(t)
	}
	w, err := conv(want, "expected")
	if err != nil {
		return nil, nil, err
	}
	g, err := conv(got, "actual")
	if err != nil {
		return nil, nil, err
	}
	return w, g, nil
}

// exclude removes fields. Collecting (on the expected value) it records the
// paths of fields set to Exclude; otherwise it removes the recorded paths.
func exclude(v any, path []string, paths map[string]bool, collecting bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := append(slices.Clip(path), k)
			key := strings.Join(p, "\x00")
			if collecting {
				if s, ok := e.(string); ok && s == Exclude {
					paths[key] = true
					continue
				}
			} else if paths[key] {
				continue
			}
			out[k] = exclude(e, p, paths, collecting)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = exclude(e, append(slices.Clip(path), fmt.Sprint(i)), paths, collecting)
		}
		return out
	}
	return v
}
