package overrides

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestErrors(t *testing.T) {
	field := func(o policyv1alpha1.FieldOverrider) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{o}}
	}
	yamlField := func(ops ...policyv1alpha1.YAMLPatchOperation) policyv1alpha1.Overriders {
		return field(policyv1alpha1.FieldOverrider{FieldPath: "/data/config", YAML: ops})
	}
	image := func(path string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
			Predicate: &policyv1alpha1.ImagePredicate{Path: path}, Component: policyv1alpha1.Tag, Operator: replace, Value: "2",
		}}}
	}
	// Each case's policy "bad" follows a good rule in a good policy, so the
	// input must survive an error after other changes were made.
	tests := []struct {
		name    string
		obj     func(testing.TB) *unstructured.Unstructured
		bad     policyv1alpha1.Overriders
		want    Error // Err is checked by wantMsg
		wantMsg string
	}{{
		name:    "bad JSON pointer escape",
		bad:     plain(plaintext(add, "/metadata/labels/a", `"ok"`), plaintext(add, "/metadata/labels/~2", `"x"`)),
		want:    Error{Overrider: "plaintext", Index: 1, Path: "/metadata/labels/~2"},
		wantMsg: "~ must be followed by 0 or 1",
	}, {
		name:    "JSON pointer without a leading slash",
		bad:     plain(plaintext(replace, "spec/replicas", "1")),
		want:    Error{Overrider: "plaintext", Path: "spec/replicas"},
		wantMsg: "must start with /",
	}, {
		name:    "remove of a missing path",
		bad:     plain(plaintext(remove, "/spec/template/spec/nodeSelector", "")),
		want:    Error{Overrider: "plaintext", Path: "/spec/template/spec/nodeSelector"},
		wantMsg: `remove: no key "nodeSelector" at /spec/template/spec`,
	}, {
		name:    "replace of a missing path",
		bad:     plain(plaintext(replace, "/spec/paused", "true")),
		want:    Error{Overrider: "plaintext", Path: "/spec/paused"},
		wantMsg: `replace: no key "paused" at /spec`,
	}, {
		name:    "add below a missing parent",
		bad:     plain(plaintext(add, "/spec/strategy/type", `"Recreate"`)),
		want:    Error{Overrider: "plaintext", Path: "/spec/strategy/type"},
		wantMsg: `add: no key "strategy" at /spec`,
	}, {
		name:    "array index out of range",
		bad:     plain(plaintext(replace, "/spec/template/spec/containers/2/image", `"x"`)),
		want:    Error{Overrider: "plaintext", Path: "/spec/template/spec/containers/2/image"},
		wantMsg: "index 2 out of range for an array of 2",
	}, {
		name:    "descending into a scalar",
		bad:     plain(plaintext(add, "/spec/replicas/x", "1")),
		want:    Error{Overrider: "plaintext", Path: "/spec/replicas/x"},
		wantMsg: "/spec/replicas is a number, not an object or array",
	}, {
		name:    "value that is not JSON",
		bad:     plain(plaintext(add, "/spec/x", `{nope`)),
		want:    Error{Overrider: "plaintext", Path: "/spec/x"},
		wantMsg: "value is not JSON",
	}, {
		name:    "image predicate path that is not a string",
		bad:     image("/spec/replicas"),
		want:    Error{Overrider: "imageOverrider", Path: "/spec/replicas"},
		wantMsg: "predicate path holds a number, not an image string",
	}, {
		name:    "image predicate path that does not exist",
		bad:     image("/spec/template/spec/containers/0/img"),
		want:    Error{Overrider: "imageOverrider", Path: "/spec/template/spec/containers/0/img"},
		wantMsg: `no key "img"`,
	}, {
		name: "image overrider making an invalid image names the container",
		bad: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			imageOp(policyv1alpha1.Registry, replace, "ok.io"),
			imageOp(policyv1alpha1.Tag, replace, "not a tag"),
		}},
		want:    Error{Overrider: "imageOverrider", Index: 1, Path: "/spec/template/spec/containers/0/image"},
		wantMsg: `invalid tag "not a tag"`,
	}, {
		name: "labels that are not a map",
		obj: func(t testing.TB) *unstructured.Unstructured {
			return deployment(t, set("metadata.labels", "oops"))
		},
		bad:     policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "a", "b")}},
		want:    Error{Overrider: "labelsOverrider", Path: "/metadata/labels"},
		wantMsg: "is a string, not an object",
	}, {
		name: "command that is not a list",
		obj: func(t testing.TB) *unstructured.Unstructured {
			return deployment(t, set("spec.template.spec.containers.0.command", "nginx"))
		},
		bad:     policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "x")}},
		want:    Error{Overrider: "commandOverrider", Path: "/spec/template/spec/containers/0/command"},
		wantMsg: "is a string, not an array",
	}, {
		name:    "fieldOverrider on content that is not YAML",
		obj:     configWith("key: [unclosed"),
		bad:     yamlField(yamlOp(add, "/a", "1")),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: "field is not YAML",
	}, {
		name:    "fieldOverrider on plain text",
		obj:     configWith("just some text"),
		bad:     yamlField(yamlOp(add, "/a", "1")),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: "YAML scalar, not a mapping or sequence",
	}, {
		name:    "fieldOverrider on several YAML documents",
		obj:     configWith("a: 1\n---\nb: 2\n"),
		bad:     yamlField(yamlOp(add, "/a", "1")),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: "more than one YAML document",
	}, {
		name:    "fieldOverrider json on YAML content",
		obj:     configWith("a: 1\n"),
		bad:     field(policyv1alpha1.FieldOverrider{FieldPath: "/data/config", JSON: []policyv1alpha1.JSONPatchOperation{jsonOp(add, "/b", "2")}}),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: "does not hold a JSON object or array",
	}, {
		name:    "fieldOverrider remove of a missing subPath",
		obj:     configWith("a:\n  b: 1\n"),
		bad:     yamlField(yamlOp(remove, "/a/c", "")),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: `yaml[0] remove /a/c: no key "c" at /a`,
	}, {
		name:    "fieldOverrider json remove of a missing subPath",
		obj:     configWith(`{"a":1}`),
		bad:     field(policyv1alpha1.FieldOverrider{FieldPath: "/data/config", JSON: []policyv1alpha1.JSONPatchOperation{jsonOp(remove, "/b", "")}}),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/config"},
		wantMsg: "unable to remove nonexistent key: b",
	}, {
		name:    "fieldOverrider on a field that is not a string",
		obj:     configWith("a: 1"),
		bad:     field(policyv1alpha1.FieldOverrider{FieldPath: "/data", YAML: []policyv1alpha1.YAMLPatchOperation{yamlOp(add, "/a", "1")}}),
		want:    Error{Overrider: "fieldOverrider", Path: "/data"},
		wantMsg: "holds an object, not a string",
	}, {
		name:    "fieldOverrider on a missing field",
		obj:     configWith("a: 1"),
		bad:     field(policyv1alpha1.FieldOverrider{FieldPath: "/data/missing", YAML: []policyv1alpha1.YAMLPatchOperation{yamlOp(add, "/a", "1")}}),
		want:    Error{Overrider: "fieldOverrider", Path: "/data/missing"},
		wantMsg: `no key "missing" at /data`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newObj := tt.obj
			if newObj == nil {
				newObj = func(t testing.TB) *unstructured.Unstructured { return deployment(t) }
			}
			in := newObj(t)
			cops := []policyv1alpha1.ClusterOverridePolicy{
				cop("good", withRule(nil, policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "good", "yes")}})),
			}
			ops := []policyv1alpha1.OverridePolicy{op("bad", withRule(names("other"), plain()), withRule(nil, tt.bad))}
			got, applied, err := Apply(in, cluster("member1"), ops, cops)
			if got != nil || applied != nil {
				t.Errorf("got an object and %v on error", refs(applied))
			}
			var oerr *Error
			if !errors.As(err, &oerr) {
				t.Fatalf("error %v is not an *Error", err)
			}
			want := tt.want
			want.Policy = PolicyRef{Kind: KindOverridePolicy, Namespace: "default", Name: "bad"}
			want.Rule = 1
			if diff := cmp.Diff(want, *oerr, cmpopts.IgnoreFields(Error{}, "Err")); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			for _, part := range []string{"OverridePolicy/default/bad", oerr.Field(), tt.want.Path} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not name %q", err, part)
				}
			}
			if diff := cmp.Diff(newObj(t).Object, in.Object); diff != "" {
				t.Errorf("input changed (-want +got):\n%s", diff)
			}
		})
	}
}

func configWith(doc string) func(testing.TB) *unstructured.Unstructured {
	return func(t testing.TB) *unstructured.Unstructured {
		return configMap(t, map[string]string{"config": doc})
	}
}

func TestErrorField(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Rule: 2, Overrider: "plaintext", Index: 1}, "spec.overrideRules[2].overriders.plaintext[1]"},
		{Error{Rule: DeprecatedRule, Overrider: "imageOverrider"}, "spec.overriders.imageOverrider[0]"},
		{Error{Rule: 0}, "spec.overrideRules[0].overriders"},
	}
	for _, tt := range tests {
		if got := tt.err.Field(); got != tt.want {
			t.Errorf("Field() = %q, want %q", got, tt.want)
		}
	}
	err := &Error{
		Policy: PolicyRef{Kind: KindClusterOverridePolicy, Name: "c"}, Rule: DeprecatedRule,
		Overrider: "plaintext", Path: "/spec/x", Err: errors.New("boom"),
	}
	if want := "ClusterOverridePolicy/c: spec.overriders.plaintext[0] (path /spec/x): boom"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestDeprecatedFormError(t *testing.T) {
	cops := []policyv1alpha1.ClusterOverridePolicy{cop("old", deprecatedForm(nil, plain(plaintext(remove, "/spec/nope", ""))))}
	_, _, err := Apply(deployment(t), cluster("m"), nil, cops)
	var oerr *Error
	if !errors.As(err, &oerr) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if got, want := oerr.Field(), "spec.overriders.plaintext[0]"; got != want {
		t.Errorf("Field() = %q, want %q", got, want)
	}
}

func TestApplyNeedsObjectAndCluster(t *testing.T) {
	if _, _, err := Apply(nil, cluster("m"), nil, nil); err == nil {
		t.Error("Apply(nil object) succeeded")
	}
	if _, _, err := Apply(deployment(t), nil, nil, nil); err == nil {
		t.Error("Apply(nil cluster) succeeded")
	}
}
