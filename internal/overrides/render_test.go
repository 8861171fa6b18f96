package overrides

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// One Renderer serves concurrent renders (run with -race), each getting the
// same result as a render on its own.
func TestRendererConcurrent(t *testing.T) {
	ops, cops := benchPolicies()
	clusters := benchClusters(20)
	obj := deployment(t)
	want := make([]map[string]any, len(clusters))
	for i, c := range clusters {
		got, _, err := Apply(obj, c, ops, cops)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got.Object
	}

	r := NewRenderer(ops, cops)
	got := make([]map[string]any, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			u, _, err := r.Apply(obj, c)
			errs[i] = err
			if err == nil {
				got[i] = u.Object
			}
		})
	}
	wg.Wait()
	for i := range clusters {
		if errs[i] != nil {
			t.Fatalf("%s: %v", clusters[i].Name, errs[i])
		}
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("%s (-alone +concurrent):\n%s", clusters[i].Name, diff)
		}
	}
	if diff := cmp.Diff(deployment(t).Object, obj.Object); diff != "" {
		t.Errorf("template changed (-want +got):\n%s", diff)
	}
}

func TestPolicies(t *testing.T) {
	c := PolicyRef{Kind: KindClusterOverridePolicy, Name: "c"}
	o := PolicyRef{Kind: KindOverridePolicy, Namespace: "default", Name: "o"}
	ms := []Match{{Policy: c, Rule: 0}, {Policy: o, Rule: 0}, {Policy: o, Rule: 2}}
	if diff := cmp.Diff([]PolicyRef{c, o}, Policies(ms)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Policies(nil); got != nil {
		t.Errorf("Policies(nil) = %v", got)
	}
}

func TestMatchingPointsIntoPolicies(t *testing.T) {
	ops := []policyv1alpha1.OverridePolicy{op("o", replicas("2"))}
	ms := Matching(deployment(t), cluster("m"), ops, nil)
	if len(ms) != 1 || ms[0].Overriders != &ops[0].Spec.OverrideRules[0].Overriders {
		t.Errorf("Matching = %+v, want the policy's own rule overriders", ms)
	}
}
