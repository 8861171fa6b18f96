package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func labelOp(operator policyv1alpha1.OverriderOperator, kv ...string) policyv1alpha1.LabelAnnotationOverrider {
	return policyv1alpha1.LabelAnnotationOverrider{Operator: operator, Value: pairs(kv...)}
}

func TestLabelsAndAnnotationsOverriders(t *testing.T) {
	tests := []struct {
		name string
		in   []objOpt
		o    policyv1alpha1.Overriders
		want []objOpt // applied to the plain deployment
	}{{
		name: "add sets new and existing keys",
		o:    policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "app", "web-eu", "app.kubernetes.io/region", "eu")}},
		want: []objOpt{withLabel("app", "web-eu"), withLabel("app.kubernetes.io/region", "eu")},
	}, {
		name: "replace changes only existing keys",
		o:    policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(replace, "app", "api", "missing", "x")}},
		want: []objOpt{withLabel("app", "api")},
	}, {
		name: "remove deletes keys whatever their value; missing keys are fine",
		in:   []objOpt{withLabel("tier", "front")},
		o:    policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(remove, "tier", "ignored", "missing", "")}},
	}, {
		name: "removing the last label drops the map",
		o:    policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(remove, "app", "")}},
		want: []objOpt{del("metadata.labels")},
	}, {
		name: "add creates annotations",
		o:    policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "example.io/owner", "team-a")}},
		want: []objOpt{withAnnotation("example.io/owner", "team-a")},
	}, {
		name: "replace on missing annotations does nothing",
		o:    policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(replace, "a", "b")}},
	}, {
		name: "entries apply in order",
		o: policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			labelOp(add, "a", "1", "b", "2"),
			labelOp(replace, "a", "3"),
			labelOp(remove, "b", ""),
		}},
		want: []objOpt{withAnnotation("a", "3")},
	}, {
		name: "labels run before annotations and only touch the object's own metadata",
		o: policyv1alpha1.Overriders{
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "x", "1")},
			LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "x", "1")},
		},
		want: []objOpt{withLabel("x", "1"), withAnnotation("x", "1")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Apply(deployment(t, tt.in...), cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, tt.o))})
			if err != nil {
				t.Fatal(err)
			}
			want := deployment(t, tt.want...)
			if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
