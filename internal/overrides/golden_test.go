package overrides

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// goldenCase is one document of a testdata/golden file: policies written as
// Karmada users write them, a template and a cluster, and the object that
// cluster must get.
type goldenCase struct {
	Name                    string                                 `json:"name"`
	Cluster                 clusterv1alpha1.Cluster                `json:"cluster"`
	OverridePolicies        []policyv1alpha1.OverridePolicy        `json:"overridePolicies"`
	ClusterOverridePolicies []policyv1alpha1.ClusterOverridePolicy `json:"clusterOverridePolicies"`
	Object                  json.RawMessage                        `json:"object"`
	// Expected is the rendered object without the applied-overrides
	// annotations, which Applied covers.
	Expected json.RawMessage `json:"expected"`
	// Applied lists the rules applied, as "Kind/[namespace/]name[rule]".
	Applied []string `json:"applied"`
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			var c goldenCase
			if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			t.Run(filepath.Base(file)+"/"+c.Name, func(t *testing.T) {
				in, want := decodeObject(t, c.Object), decodeObject(t, c.Expected)
				got, applied, err := Apply(in, &c.Cluster, c.OverridePolicies, c.ClusterOverridePolicies)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Object, withoutRecord(got).Object); diff != "" {
					t.Errorf("rendered object (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(c.Applied, refs(applied)); diff != "" {
					t.Errorf("applied (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// decodeObject decodes like the API machinery, integers as int64.
func decodeObject(t *testing.T, raw json.RawMessage) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}
