package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const testCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widgets
spec:
  target:
    apiVersion: example.com/v1
    kind: Widget
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return obj.spec.size, {resourceRequest = {cpu = "250m"}}
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.size = desiredReplica
          return obj
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          local ready = 0
          for _, item in ipairs(statusItems) do
            ready = ready + item.status.ready
          end
          desiredObj.status = {ready = ready}
          return desiredObj
        end
`

const testWidget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: shop
spec:
  size: 3
`

// runCLI runs flotillactl with args and returns what it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestInterpretCommand(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"c.yaml": testCustomization,
		"w.yaml": testWidget,
		"status.yaml": `- clusterName: a
  status: {ready: 2}
- clusterName: b
  status: {ready: 1}
`,
		"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  template:
    spec:
      containers:
        - name: web
          resources: {requests: {cpu: 100m}}
`,
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		want map[string]any
	}{
		{"replicas with a customization", []string{"-f", p("c.yaml"), "--operation", "InterpretReplica", "--desired-file", p("w.yaml")},
			map[string]any{"replica": 3.0, "requires": map[string]any{"resourceRequest": map[string]any{"cpu": "250m"}}}},
		{"revise", []string{"-f", p("c.yaml"), "--operation", "revisereplica", "--desired-file", p("w.yaml"), "--desired-replica", "7"},
			map[string]any{"revised": map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "shop"}, "spec": map[string]any{"size": 7.0}}}},
		{"aggregate", []string{"-f", p("c.yaml"), "--operation", "AggregateStatus", "--desired-file", p("w.yaml"), "--status-file", p("status.yaml")},
			map[string]any{"aggregatedStatus": map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "shop"}, "spec": map[string]any{"size": 3.0}, "status": map[string]any{"ready": 3.0}}}},
		{"native rules without -f", []string{"--operation", "InterpretReplica", "--desired-file", p("deploy.yaml")},
			map[string]any{"replica": 4.0, "requires": map[string]any{"namespace": "shop", "resourceRequest": map[string]any{"cpu": "100m"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"interpret"}, tt.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got map[string]any
			if err := yaml.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output is not YAML: %v\n%s", err, out)
			}
			if !equalJSON(got, tt.want) {
				t.Errorf("printed\n%s\nwant %v", out, tt.want)
			}
		})
	}
	if _, err := runCLI(t, "interpret", "-f", p("c.yaml"), "--operation", "InterpretHealth", "--observed-file", p("w.yaml")); err == nil ||
		!strings.Contains(err.Error(), "no interpreter rule") {
		t.Errorf("operation without a rule: %v", err)
	}
	if _, err := runCLI(t, "interpret", "--operation", "Guess", "--desired-file", p("w.yaml")); err == nil || !strings.Contains(err.Error(), "InterpretReplica") {
		t.Errorf("unknown operation: %v", err)
	}
}

func equalJSON(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

func TestInterpretCheck(t *testing.T) {
	broken := strings.Replace(testCustomization, "obj.spec.size = desiredReplica", "obj.spec.size = = desiredReplica", 1)
	dir := writeFiles(t, map[string]string{"good.yaml": testCustomization, "broken.yaml": broken})
	out, err := runCLI(t, "interpret", "--check", "-f", filepath.Join(dir, "good.yaml"))
	if err != nil || !strings.Contains(out, "widgets: ok") {
		t.Errorf("good file: %v\n%s", err, out)
	}
	out, err = runCLI(t, "interpret", "--check", "-f", filepath.Join(dir, "broken.yaml"))
	if err == nil || !strings.Contains(out, "widgets/replicaRevision") || !strings.Contains(out, "line 2") {
		t.Errorf("broken file: %v\n%s", err, out)
	}
}

func TestInterpretTest(t *testing.T) {
	good := `name: size
operation: InterpretReplica
desiredObj:
  apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w}
  spec: {size: 2}
output:
  replica: 2
`
	dir := writeFiles(t, map[string]string{
		"example.com/v1/Widget/customizations.yaml":                 testCustomization,
		"example.com/v1/Widget/testdata/interpretreplica-test.yaml": good,
		"example.com/v1/Widget/testdata/revisereplica-test.yaml":    "name: wrong\noperation: ReviseReplica\ninputReplicas: 1\ndesiredObj:\n  apiVersion: example.com/v1\n  kind: Widget\n  metadata: {name: w}\n  spec: {size: 2}\noutput:\n  revised:\n    apiVersion: example.com/v1\n    kind: Widget\n    metadata: {name: w}\n    spec: {size: 9}\n",
	})
	out, err := runCLI(t, "interpret", "--test", dir)
	if err == nil {
		t.Fatalf("a failing case passed:\n%s", out)
	}
	for _, want := range []string{"ok   example.com/v1/Widget/testdata/interpretreplica-test.yaml#1 (size)",
		"FAIL example.com/v1/Widget/testdata/revisereplica-test.yaml#1 (wrong)", "1 passed, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if err := os.Remove(filepath.Join(dir, "example.com/v1/Widget/testdata/revisereplica-test.yaml")); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "interpret", "--test", dir); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// --test compares quantities by value: the script gives "2048m", the case
// expects "2.048".
func TestInterpretTestQuantitiesByValue(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"example.com/v1/Widget/customizations.yaml": strings.Replace(testCustomization, `"250m"`, `"2048m"`, 1),
		"example.com/v1/Widget/testdata/interpretreplica-test.yaml": `name: requests
operation: InterpretReplica
desiredObj:
  apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w}
  spec: {size: 2}
output:
  replica: 2
  requires:
    resourceRequest: {cpu: "2.048"}
`,
	})
	out, err := runCLI(t, "interpret", "--test", dir)
	if err != nil || !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("%v\n%s", err, out)
	}
}

func TestInterpretRecursive(t *testing.T) {
	broken := strings.Replace(testCustomization, "obj.spec.size = desiredReplica", "obj.spec.size = = desiredReplica", 1)
	dir := writeFiles(t, map[string]string{"top.yaml": testCustomization, "sub/deeper.yaml": broken, "notes.txt": "not a manifest"})
	out, err := runCLI(t, "interpret", "--check", "-f", dir)
	if err != nil || !strings.Contains(out, "top.yaml: widgets: ok") || strings.Contains(out, "deeper") {
		t.Errorf("without -R: %v\n%s", err, out)
	}
	out, err = runCLI(t, "interpret", "--check", "-R", "-f", dir)
	if err == nil || !strings.Contains(out, "deeper.yaml") {
		t.Errorf("with -R the broken file in sub/ is checked: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "interpret", "--check", "-f", filepath.Join(dir, "sub", "none")); err == nil || !strings.Contains(err.Error(), "-f ") {
		t.Errorf("missing path: %v", err)
	}
}

func TestInterpretShowDoc(t *testing.T) {
	out, err := runCLI(t, "interpret", "--show-doc")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"InterpretReplica", "function GetReplicas(desiredObj)", "function ReviseReplica(desiredObj, desiredReplica)",
		"function Retain(desiredObj, observedObj)", "function AggregateStatus(desiredObj, statusItems)", "function ReflectStatus(observedObj)",
		"function InterpretHealth(observedObj)", "function GetDependencies(desiredObj)", "function GetComponents(desiredObj)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--show-doc lacks %q", want)
		}
	}
}

func TestInterpretEdit(t *testing.T) {
	dir := writeFiles(t, map[string]string{"c.yaml": testCustomization})
	file := filepath.Join(dir, "c.yaml")
	// The editor is sed, changing the file in place as a user would.
	t.Setenv("KUBE_EDITOR", "sed -i s/obj.spec.size,/obj.spec.size*2,/")
	out, err := runCLI(t, "interpret", "--edit", "-f", file)
	if err != nil || !strings.Contains(out, "c.yaml: edited") {
		t.Fatalf("a good edit: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "obj.spec.size*2,") {
		t.Errorf("the edit was not saved:\n%s", data)
	}
	t.Setenv("KUBE_EDITOR", "sed -i s/size.2,/size+,/")
	out, err = runCLI(t, "interpret", "--edit", "-f", file)
	if err == nil || !strings.Contains(err.Error(), "left unchanged") || !strings.Contains(out, "widgets/replicaResource") {
		t.Fatalf("a broken edit: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "obj.spec.size*2,") {
		t.Errorf("a broken edit changed the file:\n%s", data)
	}
	t.Setenv("KUBE_EDITOR", "true")
	if out, err := runCLI(t, "interpret", "--edit", "-f", file); err != nil || !strings.Contains(out, "no changes made") {
		t.Errorf("an edit that changes nothing: %v\n%s", err, out)
	}
}
