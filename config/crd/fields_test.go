package crd

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// implementedKinds are the kinds whose CRDs Flotilla must generate today. The
// fields files list more (FederatedHPA, Karmada, ...): those are compared as soon
// as their CRD exists, and must be added here when they land.
var implementedKinds = []string{
	"cluster.karmada.io/Cluster",
	"policy.karmada.io/PropagationPolicy",
	"policy.karmada.io/ClusterPropagationPolicy",
	"policy.karmada.io/OverridePolicy",
	"policy.karmada.io/ClusterOverridePolicy",
	"policy.karmada.io/FederatedResourceQuota",
	"policy.karmada.io/ClusterTaintPolicy",
	"work.karmada.io/Work",
	"work.karmada.io/ResourceBinding",
	"work.karmada.io/ClusterResourceBinding",
	"config.karmada.io/ResourceInterpreterCustomization",
	"config.karmada.io/ResourceInterpreterWebhookConfiguration",
	"apps.karmada.io/WorkloadRebalancer",
	"autoscaling.karmada.io/FederatedHPA",
	"autoscaling.karmada.io/CronFederatedHPA",
	"networking.karmada.io/MultiClusterService",
	"networking.karmada.io/MultiClusterIngress",
	"multicluster.x-k8s.io/ServiceExport",
	"multicluster.x-k8s.io/ServiceImport",
	"operator.karmada.io/Karmada",
}

// stricterThanWire lists paths where the CRD deliberately validates more than
// the fields file records. Karmada serves Cluster from an aggregated API server
// whose schema carries no enum on condition status; Flotilla's metav1.Condition
// allows exactly the values that server would ever write.
var stricterThanWire = map[string]bool{
	"cluster.karmada.io/Cluster v1alpha1 status.conditions[].status": true,
}

// kindSpec is one fields file: the facts about a kind's CRD.
type kindSpec struct {
	file     string
	group    string
	kind     string
	header   crdHeader
	versions map[string]map[string]fieldFact // version -> path -> fact
}

// crdHeader is what a fields file says about the CRD besides its fields.
type crdHeader struct {
	Scope      string
	Plural     string
	ShortNames []string
	Versions   []string // "v1alpha1 served storage subresource=status"
}

type fieldFact struct {
	Type     string
	Enum     []string
	Required bool
}

func (f fieldFact) String() string {
	s := f.Type
	if len(f.Enum) > 0 {
		s += " enum=" + strings.Join(f.Enum, "|")
	}
	if f.Required {
		s += " required"
	}
	return s
}

func parseFieldsFile(path string) (*kindSpec, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }() // opened only for reading

	spec := &kindSpec{file: filepath.Base(path), versions: map[string]map[string]fieldFact{}}
	scanner := bufio.NewScanner(file)
	for line := 1; scanner.Scan(); line++ {
		words := strings.Fields(scanner.Text())
		switch {
		case len(words) == 0:
		case words[0] == "#" && len(words) > 1 && words[1] == "version":
			spec.header.Versions = append(spec.header.Versions, strings.Join(words[2:], " "))
		case words[0] == "#" && spec.kind == "" && len(words) >= 3 && strings.Contains(words[1], "."):
			spec.group, spec.kind = words[1], words[2]
			for _, w := range words[3:] {
				key, value, _ := strings.Cut(w, "=")
				switch key {
				case "scope":
					spec.header.Scope = value
				case "plural":
					spec.header.Plural = value
				case "shortNames":
					spec.header.ShortNames = strings.Split(value, ",")
				}
			}
		case words[0] == "#":
			// A remark for readers.
		default:
			if len(words) < 3 {
				return nil, fmt.Errorf("%s:%d: want '<version> <path> <type>', got %q", path, line, scanner.Text())
			}
			fact := fieldFact{Type: words[2]}
			for _, w := range words[3:] {
				switch {
				case strings.HasPrefix(w, "enum="):
					fact.Enum = strings.Split(strings.TrimPrefix(w, "enum="), "|")
				case w == "required":
					fact.Required = true
				default:
					return nil, fmt.Errorf("%s:%d: unknown attribute %q", path, line, w)
				}
			}
			if spec.versions[words[0]] == nil {
				spec.versions[words[0]] = map[string]fieldFact{}
			}
			spec.versions[words[0]][words[1]] = fact
		}
	}
	return spec, scanner.Err()
}

// schemaFields flattens a CRD schema into the fields-file notation.
func schemaFields(schema *apiextensionsv1.JSONSchemaProps) map[string]fieldFact {
	out := map[string]fieldFact{}
	var walk func(prefix string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(prefix string, s *apiextensionsv1.JSONSchemaProps) {
		for name, child := range s.Properties {
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			fact := factOf(&child)
			fact.Required = slices.Contains(s.Required, name)
			out[path] = fact
			walk(path, &child)
		}
		if s.Items != nil && s.Items.Schema != nil {
			out[prefix+"[]"] = factOf(s.Items.Schema)
			walk(prefix+"[]", s.Items.Schema)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			out[prefix+"{}"] = factOf(s.AdditionalProperties.Schema)
			walk(prefix+"{}", s.AdditionalProperties.Schema)
		}
	}
	walk("", schema)
	return out
}

func factOf(s *apiextensionsv1.JSONSchemaProps) fieldFact {
	fact := fieldFact{Type: s.Type}
	switch {
	case s.XIntOrString:
		fact.Type = "int-or-string"
	case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields &&
		(s.Type == "" || s.Type == "object") && len(s.Properties) == 0:
		fact.Type = "object(any)"
	}
	for _, e := range s.Enum {
		fact.Enum = append(fact.Enum, strings.Trim(string(e.Raw), `"`))
	}
	return fact
}

func loadCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for dir, files := range map[string]fs.FS{"bases": Bases, "operator": Operator} {
		err := fs.WalkDir(files, dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(files, path)
			if err != nil {
				return err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			crds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd
			return nil
		})
		if err != nil {
			t.Fatalf("reading generated CRDs: %v", err)
		}
	}
	return crds
}

func headerOf(crd *apiextensionsv1.CustomResourceDefinition) crdHeader {
	h := crdHeader{
		Scope:      string(crd.Spec.Scope),
		Plural:     crd.Spec.Names.Plural,
		ShortNames: crd.Spec.Names.ShortNames,
	}
	for _, v := range crd.Spec.Versions {
		words := []string{v.Name}
		if v.Served {
			words = append(words, "served")
		}
		if v.Storage {
			words = append(words, "storage")
		}
		if v.Subresources != nil && v.Subresources.Status != nil {
			words = append(words, "subresource=status")
		}
		h.Versions = append(h.Versions, strings.Join(words, " "))
	}
	sort.Strings(h.Versions)
	return h
}

// TestCRDFields checks every generated CRD against the Karmada wire interface:
// each listed field path must exist with the same type, enum and required-ness,
// and scope, names, versions and subresources must match. CRDs may add fields.
func TestCRDFields(t *testing.T) {
	crds := loadCRDs(t)
	files, err := filepath.Glob("testdata/karmada-api/*.fields")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fields files in testdata/karmada-api: %v", err)
	}
	specs := map[string]*kindSpec{}
	for _, f := range files {
		spec, err := parseFieldsFile(f)
		if err != nil {
			t.Fatal(err)
		}
		specs[spec.group+"/"+spec.kind] = spec
	}
	for _, k := range implementedKinds {
		if specs[k] == nil {
			t.Errorf("%s: no fields file lists it", k)
		}
		if crds[k] == nil {
			t.Errorf("%s: no generated CRD in config/crd/bases or config/crd/operator", k)
		}
	}

	for key, spec := range specs {
		crd := crds[key]
		if crd == nil {
			t.Logf("%s: not implemented yet, %s not compared", key, spec.file)
			continue
		}
		t.Run(spec.kind, func(t *testing.T) {
			want := spec.header
			sort.Strings(want.Versions)
			if diff := cmp.Diff(want, headerOf(crd)); diff != "" {
				t.Errorf("%s header mismatch (-fields file +CRD):\n%s", spec.kind, diff)
			}
			for version, wantFields := range spec.versions {
				var got map[string]fieldFact
				for _, v := range crd.Spec.Versions {
					if v.Name == version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
						got = schemaFields(v.Schema.OpenAPIV3Schema)
					}
				}
				if got == nil {
					t.Errorf("version %s has no schema", version)
					continue
				}
				var problems []string
				for path, w := range wantFields {
					g, ok := got[path]
					deliberatelyStricter := stricterThanWire[key+" "+version+" "+path] && w.Type == g.Type
					switch {
					case !ok:
						problems = append(problems, fmt.Sprintf("missing  %s %s", path, w))
					case !sameFact(w, g) && !deliberatelyStricter:
						problems = append(problems, fmt.Sprintf("mismatch %s: want %s, got %s", path, w, g))
					}
				}
				sort.Strings(problems)
				for _, p := range problems {
					t.Errorf("%s %s", version, p)
				}
			}
		})
	}
}

func sameFact(want, got fieldFact) bool {
	if want.Type != got.Type || want.Required != got.Required {
		return false
	}
	a, b := slices.Clone(want.Enum), slices.Clone(got.Enum)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
