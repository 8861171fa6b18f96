package overrides

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestRecordApplied(t *testing.T) {
	cops := []policyv1alpha1.ClusterOverridePolicy{
		cop("c", withRule(nil, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "a", "b")}})),
		cop("elsewhere", withRule(names("other"), plain(plaintext(replace, "/spec/replicas", "9")))),
	}
	ops := []policyv1alpha1.OverridePolicy{op("o",
		replicas("2"),
		withRule(nil, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Tag, replace, "1.26")}}),
	)}
	tests := []struct {
		name string
		in   []objOpt
		ops  []policyv1alpha1.OverridePolicy
		cops []policyv1alpha1.ClusterOverridePolicy
		want map[string]string // annotations of the result
	}{{
		name: "one entry per applied rule, in Karmada's JSON shape",
		ops:  ops,
		cops: cops,
		want: map[string]string{
			policyv1alpha1.AppliedClusterOverrides: `[{"policyName":"c","overriders":{"labelsOverrider":[{"operator":"add","value":{"a":"b"}}]}}]`,
			policyv1alpha1.AppliedOverrides: `[{"policyName":"o","overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":2}]}},` +
				`{"policyName":"o","overriders":{"imageOverrider":[{"component":"Tag","operator":"replace","value":"1.26"}]}}]`,
		},
	}, {
		name: "only the kinds that applied are recorded",
		cops: cops,
		want: map[string]string{
			policyv1alpha1.AppliedClusterOverrides: `[{"policyName":"c","overriders":{"labelsOverrider":[{"operator":"add","value":{"a":"b"}}]}}]`,
		},
	}, {
		name: "nothing applied, nothing recorded",
		cops: cops[1:],
	}, {
		name: "a record copied from the template is dropped, other annotations stay",
		in: []objOpt{
			withAnnotation(policyv1alpha1.AppliedOverrides, `[{"policyName":"stale"}]`),
			withAnnotation(policyv1alpha1.AppliedClusterOverrides, `[{"policyName":"stale"}]`),
			withAnnotation("keep", "me"),
		},
		want: map[string]string{"keep": "me"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Apply(deployment(t, tt.in...), cluster("member1"), tt.ops, tt.cops)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// Karmada's readers decode the annotation into OverridePolicyShadow values;
// ours must decode the same way and give back the policy's overriders.
func TestRecordDecodes(t *testing.T) {
	o := policyv1alpha1.Overriders{
		Plaintext:      []policyv1alpha1.PlaintextOverrider{plaintext(add, "/spec/x", `{"k":[1,"2"]}`)},
		ImageOverrider: []policyv1alpha1.ImageOverrider{{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Registry, Operator: replace, Value: "r.io"}},
		FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/spec/y", YAML: []policyv1alpha1.YAMLPatchOperation{yamlOp(add, "/a", "1")}}},
	}
	r := NewRenderer([]policyv1alpha1.OverridePolicy{op("o", withRule(nil, o))}, nil)
	got, _, err := r.Apply(deployment(t, set("spec.x", nil), set("spec.y", "a: 0\n")), cluster("m"))
	if err != nil {
		t.Fatal(err)
	}
	var shadows []struct {
		PolicyName string                    `json:"policyName"`
		Overriders policyv1alpha1.Overriders `json:"overriders"`
	}
	if err := json.Unmarshal([]byte(got.GetAnnotations()[policyv1alpha1.AppliedOverrides]), &shadows); err != nil {
		t.Fatal(err)
	}
	if len(shadows) != 1 || shadows[0].PolicyName != "o" {
		t.Fatalf("shadows = %+v, want one for policy o", shadows)
	}
	if diff := cmp.Diff(o, shadows[0].Overriders); diff != "" {
		t.Errorf("recorded overriders (-want +got):\n%s", diff)
	}
}
