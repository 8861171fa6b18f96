package overrides

import (
	"encoding/json"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func quickConfig() *quick.Config {
	return &quick.Config{MaxCount: 300, Rand: rand.New(rand.NewSource(1))}
}

// withMaps gives the deployment these labels and annotations; an empty map
// means none, as the API server stores it.
func withMaps(labels, annotations map[string]string) objOpt {
	return func(t testing.TB, u *unstructured.Unstructured) {
		t.Helper()
		u.SetLabels(nil)
		if len(labels) > 0 {
			u.SetLabels(labels)
		}
		if len(annotations) > 0 {
			delete(annotations, policyv1alpha1.AppliedOverrides)
			delete(annotations, policyv1alpha1.AppliedClusterOverrides)
			u.SetAnnotations(annotations)
		}
	}
}

// Rendering through no policy, or through policies that do not apply,
// gives the template back unchanged.
func TestPropertyNoPolicyIsIdentity(t *testing.T) {
	cops := []policyv1alpha1.ClusterOverridePolicy{
		cop("other-cluster", withRule(names("elsewhere"), plain(plaintext(replace, "/spec/replicas", "9")))),
		cop("other-kind", selecting(policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Pod"}), replicas("9")),
	}
	ops := []policyv1alpha1.OverridePolicy{opIn("other-namespace", "p", replicas("9"))}
	identity := func(labels, annotations map[string]string, n int64) bool {
		in := deployment(t, withMaps(labels, annotations), set("spec.replicas", n))
		for _, r := range []*Renderer{NewRenderer(nil, nil), NewRenderer(ops, cops)} {
			got, applied, err := r.Apply(in, cluster("member1"))
			if err != nil || applied != nil {
				t.Logf("err=%v applied=%v", err, refs(applied))
				return false
			}
			if diff := cmp.Diff(in.Object, got.Object); diff != "" {
				t.Logf("(-in +got):\n%s", diff)
				return false
			}
		}
		return true
	}
	if err := quick.Check(identity, quickConfig()); err != nil {
		t.Error(err)
	}
}

// Labels or annotations added by one policy and removed by a later one are
// as they were.
func TestPropertyLabelsRemoveUndoesAdd(t *testing.T) {
	undo := func(base, extra map[string]string) bool {
		for k := range base {
			delete(extra, k)
		}
		add := []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: extra}}
		rm := []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpRemove, Value: extra}}
		cops := []policyv1alpha1.ClusterOverridePolicy{cop("adds", withRule(nil, policyv1alpha1.Overriders{LabelsOverrider: add, AnnotationsOverrider: add}))}
		ops := []policyv1alpha1.OverridePolicy{op("removes", withRule(nil, policyv1alpha1.Overriders{LabelsOverrider: rm, AnnotationsOverrider: rm}))}
		in := deployment(t, withMaps(base, base))
		got, _, err := Apply(in, cluster("m"), ops, cops)
		if err != nil {
			t.Log(err)
			return false
		}
		if diff := cmp.Diff(in.Object, withoutRecord(got).Object); diff != "" {
			t.Logf("(-in +got):\n%s", diff)
			return false
		}
		return true
	}
	if err := quick.Check(undo, quickConfig()); err != nil {
		t.Error(err)
	}
}

// A plaintext add followed by a remove of the same path restores the
// object, for random paths into objects (keys with / and ~ included) and
// arrays, and random JSON values. A replace by the current value changes
// nothing.
func TestPropertyPlaintextRemoveUndoesAdd(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	in := deployment(t, withLabel("app.kubernetes.io/name", "web"))
	var containers, leaves []string
	collectPaths(in.Object, "", &containers, &leaves)

	for i := 0; i < 500; i++ {
		parent := containers[rnd.Intn(len(containers))]
		node, err := mustParse(t, parent).get(in.Object)
		if err != nil {
			t.Fatal(err)
		}
		var addPath, removePath string
		switch n := node.(type) {
		case map[string]any:
			key := randomKey(rnd)
			for _, taken := n[key]; taken; _, taken = n[key] {
				key += "x"
			}
			addPath = parent + "/" + escapeToken(key)
			removePath = addPath
		case []any:
			idx := rnd.Intn(len(n) + 1)
			addPath = parent + "/" + strconv.Itoa(idx)
			removePath = addPath
			if rnd.Intn(4) == 0 {
				addPath, removePath = parent+"/-", parent+"/"+strconv.Itoa(len(n))
			}
		}
		value := randomJSON(rnd, 2)
		leaf := leaves[rnd.Intn(len(leaves))]
		cur, _ := mustParse(t, leaf).get(in.Object)
		curJSON, _ := json.Marshal(cur)
		ops := []policyv1alpha1.PlaintextOverrider{
			plaintext(add, addPath, value),
			plaintext(remove, removePath, ""),
			plaintext(replace, leaf, string(curJSON)),
		}

		got, _, err := Apply(in, cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, plain(ops...)))})
		if err != nil {
			t.Fatalf("add %s %s, remove %s, replace %s: %v", addPath, value, removePath, leaf, err)
		}
		if diff := cmp.Diff(in.Object, withoutRecord(got).Object); diff != "" {
			t.Fatalf("add %s %s, remove %s, replace %s (-in +got):\n%s", addPath, value, removePath, leaf, diff)
		}
	}
}

func mustParse(t *testing.T, s string) pointer {
	t.Helper()
	p, err := parsePointer(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// collectPaths lists the JSON pointers of every object and array (except
// the root) and of every scalar in v.
func collectPaths(v any, at string, containers, leaves *[]string) {
	switch n := v.(type) {
	case map[string]any:
		if at != "" {
			*containers = append(*containers, at)
		}
		for k, c := range n {
			collectPaths(c, at+"/"+escapeToken(k), containers, leaves)
		}
	case []any:
		*containers = append(*containers, at)
		for i, c := range n {
			collectPaths(c, at+"/"+strconv.Itoa(i), containers, leaves)
		}
	default:
		*leaves = append(*leaves, at)
	}
}

func escapeToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func randomKey(rnd *rand.Rand) string {
	const alphabet = "abcXYZ09-._/~ "
	b := make([]byte, 1+rnd.Intn(8))
	for i := range b {
		b[i] = alphabet[rnd.Intn(len(alphabet))]
	}
	return string(b)
}

// randomJSON returns the text of a random JSON value nested up to depth.
func randomJSON(rnd *rand.Rand, depth int) string {
	kinds := 5
	if depth > 0 {
		kinds = 7
	}
	switch rnd.Intn(kinds) {
	case 0:
		return "null"
	case 1:
		return strconv.FormatBool(rnd.Intn(2) == 0)
	case 2:
		return strconv.Itoa(rnd.Intn(2000) - 1000)
	case 3:
		return strconv.FormatFloat(rnd.Float64()*100, 'f', 3, 64)
	case 4:
		b, _ := json.Marshal(randomKey(rnd))
		return string(b)
	case 5:
		parts := make([]string, rnd.Intn(3))
		for i := range parts {
			k, _ := json.Marshal(randomKey(rnd))
			parts[i] = string(k) + ":" + randomJSON(rnd, depth-1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	default:
		parts := make([]string, rnd.Intn(3))
		for i := range parts {
			parts[i] = randomJSON(rnd, depth-1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
}
