package overrides

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func yamlOp(operator policyv1alpha1.OverriderOperator, subPath, value string) policyv1alpha1.YAMLPatchOperation {
	return policyv1alpha1.YAMLPatchOperation{SubPath: subPath, Operator: operator, Value: jsonValue(value)}
}

func jsonOp(operator policyv1alpha1.OverriderOperator, subPath, value string) policyv1alpha1.JSONPatchOperation {
	return policyv1alpha1.JSONPatchOperation{SubPath: subPath, Operator: operator, Value: jsonValue(value)}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFieldOverrider(t *testing.T) {
	tests := []struct {
		name  string
		field string // key in data
		in    string
		o     policyv1alpha1.FieldOverrider
		want  string
	}{{
		name:  "YAML keeps comments, key order and types",
		field: "config.yaml",
		in:    readFile(t, "testdata/fieldoverrider-config.yaml"),
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
			yamlOp(replace, "/server/port", "9090"),
			yamlOp(add, "/server/hosts/-", `"c.example"`),
			yamlOp(remove, "/log/level", ""),
			yamlOp(add, "/log/format", `"json"`),
			yamlOp(add, "/feature", `{"enabled": true, "ids": [1, "2"]}`),
		}},
		want: readFile(t, "testdata/fieldoverrider-config.golden.yaml"),
	}, {
		name:  "YAML sequence document, no trailing newline",
		field: "hosts",
		in:    "- a\n- b",
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/hosts", YAML: []policyv1alpha1.YAMLPatchOperation{
			yamlOp(add, "/0", `"z"`),
			yamlOp(remove, "/2", ""),
		}},
		want: "- z\n- a",
	}, {
		name:  "YAML string that reads as a number stays a string",
		field: "c.yaml",
		in:    "version: v1\n",
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/c.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
			yamlOp(replace, "/version", `"1.10"`),
			yamlOp(add, "/on", `"yes"`),
		}},
		want: "version: \"1.10\"\n\"on\": \"yes\"\n",
	}, {
		name:  "pretty JSON is re-marshalled compactly as Karmada does, key order kept",
		field: "config.json",
		in:    "{\n  \"b\": 1,\n  \"a\": {\"x\": [1, 2]}\n}\n",
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
			jsonOp(add, "/a/x/-", "3"),
			jsonOp(replace, "/b", `"<two>"`),
			jsonOp(add, "/c", ""),
		}},
		want: `{"b":"\u003ctwo\u003e","a":{"x":[1,2,3]},"c":null}`,
	}, {
		name:  "Karmada's example: the whole document compact",
		field: "deploy.json",
		in:    "{\n  \"replicas\": 3,\n  \"name\": \"nginx\"\n}",
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/deploy.json", JSON: []policyv1alpha1.JSONPatchOperation{
			jsonOp(replace, "/replicas", "5"),
			jsonOp(replace, "/name", `"nginx-helper"`),
		}},
		want: `{"replicas":5,"name":"nginx-helper"}`,
	}, {
		name:  "compact JSON stays compact",
		field: "c.json",
		in:    `{"b":1,"a":2}`,
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/c.json", JSON: []policyv1alpha1.JSONPatchOperation{
			jsonOp(add, "/c", "3"),
			jsonOp(remove, "/a", ""),
		}},
		want: `{"b":1,"c":3}`,
	}, {
		name:  "tab-indented JSON becomes compact",
		field: "t.json",
		in:    "{\n\t\"a\": 1\n}",
		o: policyv1alpha1.FieldOverrider{FieldPath: "/data/t.json", JSON: []policyv1alpha1.JSONPatchOperation{
			jsonOp(replace, "/a", "2"),
		}},
		want: `{"a":2}`,
	}, {
		name:  "no operations leave the field as it is",
		field: "raw",
		in:    "not: [parsed",
		o:     policyv1alpha1.FieldOverrider{FieldPath: "/data/raw"},
		want:  "not: [parsed",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := configMap(t, map[string]string{tt.field: tt.in, "other": "untouched"})
			o := policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{tt.o}}
			got, _, err := Apply(in, cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, o))})
			if err != nil {
				t.Fatal(err)
			}
			want := configMap(t, map[string]string{tt.field: tt.want, "other": "untouched"})
			if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
