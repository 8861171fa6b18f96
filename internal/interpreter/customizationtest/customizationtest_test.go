package customizationtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/flotilla-io/flotilla/internal/interpreter/customizationtest"
	"github.com/flotilla-io/flotilla/lua"
)

const widgetCustomization = `
apiVersion: config.karmada.io/v1alpha1
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
          return obj.spec.size, {resourceRequest = {cpu = "1000m"}, nodeClaim = {nodeSelector = obj.spec.nodeSelector}}
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.size = desiredReplica
          obj.metadata.annotations = {revised = os.date("!%Y-%m-%dT%H:%M:%SZ")}
          return obj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status.ready == true
        end
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(obj)
          return {{apiVersion = "v1", kind = "Secret", namespace = obj.metadata.namespace, name = "b"},
                  {apiVersion = "v1", kind = "ConfigMap", namespace = obj.metadata.namespace, name = "a"}}
        end
`

const widgetObj = `
  apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: w
    namespace: shop
  spec:
    size: 3
    nodeSelector:
      disk: ssd
  status:
    ready: true
`

func fsWith(tests map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"example.com/v1/Widget/customizations.yaml": {Data: []byte(widgetCustomization)}}
	for name, data := range tests {
		fsys["example.com/v1/Widget/testdata/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestPassingCases(t *testing.T) {
	fsys := fsWith(map[string]string{
		"interpretreplica-test.yaml": `
name: size and requests
operation: InterpretReplica
desiredObj:` + widgetObj + `
output:
  replica: 3
  requires:
    resourceRequest:
      cpu: "1"
    nodeClaim:
      nodeSelector:
        disk: ssd
`,
		"revisereplica-test.yaml": `
name: revised, with the timestamp excluded
operation: ReviseReplica
inputReplicas: 5
desiredObj:` + widgetObj + `
output:
  revised:
    apiVersion: example.com/v1
    kind: Widget
    metadata:
      name: w
      namespace: shop
      annotations:
        revised: "{{EXCLUDE}}"
    spec:
      size: 5
      nodeSelector:
        disk: ssd
    status:
      ready: true
`,
		"interprethealth-test.yaml": `
name: ready
operation: InterpretHealth
observedObj:` + widgetObj + `
output:
  healthy: true
---
name: no expectation
operation: InterpretHealth
observedObj:` + widgetObj + `
`,
		"interpretdependency-test.yaml": `
name: in any order
operation: InterpretDependency
desiredObj:` + widgetObj + `
output:
  dependencies:
    - {apiVersion: v1, kind: Secret, namespace: shop, name: b}
    - {apiVersion: v1, kind: ConfigMap, namespace: shop, name: a}
`,
	})
	vm := lua.New()
	t.Cleanup(vm.Close)
	outcomes, err := customizationtest.RunDir(context.Background(), fsys, "example.com/v1/Widget", vm)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 5 {
		t.Fatalf("%d outcomes, want 5", len(outcomes))
	}
	for _, o := range outcomes {
		if o.Failed() {
			t.Errorf("%s failed: %v %v", o.Case.ID(), o.Err, o.Diffs)
		}
	}
	for _, o := range outcomes {
		if o.Case.Name == "no expectation" && (len(o.Unchecked) != 1 || o.Unchecked[0] != "healthy") {
			t.Errorf("case without output: unchecked %v", o.Unchecked)
		}
	}
	customizationtest.Test(t, fsys, "example.com/v1/Widget", vm)
}

func TestFailingCases(t *testing.T) {
	fsys := fsWith(map[string]string{
		"interpretreplica-test.yaml": `
name: wrong count
operation: InterpretReplica
desiredObj:` + widgetObj + `
output:
  replica: 4
---
name: missing output
operation: InterpretReplica
desiredObj:
  apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w}
  spec: {size: 1}
output:
  requires:
    resourceRequest:
      cpu: "2"
`,
	})
	vm := lua.New()
	t.Cleanup(vm.Close)
	outcomes, err := customizationtest.RunDir(context.Background(), fsys, "example.com/v1/Widget", vm)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 2 || !outcomes[0].Failed() || !outcomes[1].Failed() {
		t.Fatalf("outcomes %+v: want two failures", outcomes)
	}
	d := strings.Join(outcomes[0].Diffs, "\n")
	for _, want := range []string{"interpretreplica-test.yaml#1", "wrong count", "replica", "-", "4", "+", "3"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff %q does not mention %q", d, want)
		}
	}
	if d := strings.Join(outcomes[1].Diffs, "\n"); !strings.Contains(d, "requires") || !strings.Contains(d, `"2"`) {
		t.Errorf("second diff %q", d)
	}
}

func TestBadTestdata(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	noTests := fstest.MapFS{"example.com/v1/Widget/customizations.yaml": {Data: []byte(widgetCustomization)}}
	if _, err := customizationtest.RunDir(context.Background(), noTests, "example.com/v1/Widget", vm); !errors.Is(err, customizationtest.ErrNoTestdata) {
		t.Errorf("no testdata: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown operation": "name: x\noperation: Guess\ndesiredObj:" + widgetObj,
		"foreign key":       "name: x\noperation: InterpretHealth\nobservedObj:" + widgetObj + "output:\n  replica: 1\n",
		"no object":         "name: x\noperation: InterpretHealth\noutput:\n  healthy: true\n",
	} {
		if _, err := customizationtest.DecodeCases(name, []byte(doc)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	broken := fsWith(map[string]string{"interprethealth-test.yaml": "name: x\noperation: InterpretHealth\nobservedObj:" + widgetObj})
	broken["example.com/v1/Widget/customizations.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(widgetCustomization,
		"return obj.status.ready == true", "return obj.status.ready ==", 1))}
	_, err := customizationtest.RunDir(context.Background(), broken, "example.com/v1/Widget", vm)
	if err == nil || !strings.Contains(err.Error(), "widgets/healthInterpretation") || !strings.Contains(err.Error(), "line") {
		t.Errorf("broken script: %v", err)
	}
}

// Quantities compare by value wherever they are, in typed results and in
// objects alike: a case written "2.048" passes for a script giving "2048m".
// Values that differ still fail.
func TestQuantitiesCompareByValue(t *testing.T) {
	const customization = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: pools
spec:
  target:
    apiVersion: example.com/v1
    kind: Pool
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return 1, {resourceRequest = {cpu = "2048m", memory = "1Gi"}}
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(observedObj)
          return {capacity = {cpu = "2048m", memory = "1Gi"}, version = "1.0"}
        end
`
	const pool = `
  apiVersion: example.com/v1
  kind: Pool
  metadata: {name: p, namespace: ns}
  spec: {}
`
	tests := []struct {
		name, cases string
		fail        bool
	}{{
		name: "requires",
		cases: `
name: requests
operation: InterpretReplica
desiredObj:` + pool + `
output:
  replica: 1
  requires:
    resourceRequest: {cpu: "2.048", memory: "1073741824"}
`,
	}, {
		name: "status object",
		cases: `
name: capacity
operation: InterpretStatus
observedObj:` + pool + `
output:
  status:
    capacity: {cpu: "2.048", memory: "1024Mi"}
    version: "1.0"
`,
	}, {
		name: "different quantities differ",
		cases: `
name: capacity
operation: InterpretStatus
observedObj:` + pool + `
output:
  status:
    capacity: {cpu: "2", memory: "1Gi"}
    version: "1.0"
`,
		fail: true,
	}, {
		name: "strings that are not both quantities compare as strings",
		cases: `
name: capacity
operation: InterpretStatus
observedObj:` + pool + `
output:
  status:
    capacity: {cpu: "2048m", memory: "1Gi"}
    version: "1.0.0"
`,
		fail: true,
	}}
	vm := lua.New()
	t.Cleanup(vm.Close)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"example.com/v1/Pool/customizations.yaml":  {Data: []byte(customization)},
				"example.com/v1/Pool/testdata/x-test.yaml": {Data: []byte(tt.cases)},
			}
			outcomes, err := customizationtest.RunDir(context.Background(), fsys, "example.com/v1/Pool", vm)
			if err != nil {
				t.Fatal(err)
			}
			if len(outcomes) != 1 {
				t.Fatalf("%d outcomes, want 1", len(outcomes))
			}
			if o := outcomes[0]; o.Failed() != tt.fail {
				t.Errorf("failed = %v, want %v: %v %v", o.Failed(), tt.fail, o.Err, o.Diffs)
			}
		})
	}
}
