package lua

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// workloadScript is written the way Karmada customizations are: globals
// without local, nil checks everywhere, kube helpers, one function per
// interpreter operation.
const workloadScript = `
local kube = require("kube")

function GetReplicas(obj)
  replica = obj.spec.replicas
  requirement = kube.accuratePodRequirements(obj.spec.template)
  return replica, requirement
end

function GetComponents(obj)
  local components = {}
  for i, role in ipairs(obj.spec.roles) do
    components[#components + 1] = {
      name = role.name,
      replicas = role.replicas,
      replicaRequirements = kube.accuratePodRequirements(role.template),
    }
  end
  return components
end

function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end

function Retain(desiredObj, observedObj)
  if observedObj.spec.paused ~= nil then
    desiredObj.spec.paused = observedObj.spec.paused
  end
  return desiredObj
end

function ReflectStatus(observedObj)
  if observedObj.status == nil then
    return {}
  end
  return {
    replicas = observedObj.status.replicas,
    readyReplicas = observedObj.status.readyReplicas,
    conditions = observedObj.status.conditions,
  }
end

function AggregateStatus(desiredObj, statusItems)
  if desiredObj.status == nil then
    desiredObj.status = {}
  end
  local replicas, ready = 0, 0
  local clusters = {}
  for i = 1, #statusItems do
    local item = statusItems[i]
    if item.status ~= nil then
      replicas = replicas + (item.status.replicas or 0)
      ready = ready + (item.status.readyReplicas or 0)
    end
    table.insert(clusters, item.clusterName .. "=" .. tostring(item.applied))
  end
  desiredObj.status.replicas = replicas
  desiredObj.status.readyReplicas = ready
  desiredObj.status.clusters = table.concat(clusters, ",")
  desiredObj.status.conditions = {}
  return desiredObj
end

function InterpretHealth(observedObj)
  return observedObj.status ~= nil and observedObj.status.readyReplicas == observedObj.spec.replicas
end

function GetDependencies(desiredObj)
  local refs = kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
  if desiredObj.spec.configRef ~= nil then
    table.insert(refs, {apiVersion = "v1", kind = "ConfigMap", namespace = desiredObj.metadata.namespace, name = desiredObj.spec.configRef})
  end
  return refs
end
`

func workload() map[string]any {
	tpl := map[string]any{"spec": map[string]any{
		"containers":         []any{map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"cpu": "200m", "memory": "256Mi"}}}},
		"serviceAccountName": "app",
	}}
	return map[string]any{
		"apiVersion": "apps.example.io/v1", "kind": "Workload",
		"metadata": map[string]any{"name": "w", "namespace": "prod"},
		"spec": map[string]any{
			"replicas": int64(3), "paused": false, "template": tpl, "configRef": "w-config",
			"roles": []any{
				map[string]any{"name": "leader", "replicas": int64(1), "template": tpl},
				map[string]any{"name": "worker", "replicas": int64(2), "template": tpl},
			},
		},
		"status": map[string]any{
			"replicas": int64(3), "readyReplicas": int64(3),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		},
	}
}

// karmadaCall runs one function of workloadScript and converts result i.
func karmadaCall(t *testing.T, vm *VM, fn string, nret, i int, convert func(Results, int) (any, error), args ...any) any {
	t.Helper()
	r, err := vm.Call(context.Background(), Script{Name: "apps.example.io/v1/Workload", Code: workloadScript}, fn, nret, args...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := convert(r, i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func value(r Results, i int) (any, error)   { return r.Value(i) }
func object(r Results, i int) (any, error)  { return r.Object(i) }
func list(r Results, i int) (any, error)    { return r.List(i) }
func boolean(r Results, i int) (any, error) { return r.Bool(i) }
func integer(r Results, i int) (any, error) { return r.Int64(i) }

func TestKarmadaStyleScript(t *testing.T) {
	vm := New()
	defer vm.Close()
	script := Script{Name: "apps.example.io/v1/Workload", Code: workloadScript}
	if err := vm.Check(context.Background(), script, "GetReplicas", "GetComponents", "ReviseReplica", "Retain",
		"ReflectStatus", "AggregateStatus", "InterpretHealth", "GetDependencies"); err != nil {
		t.Fatal(err)
	}
	requires := map[string]any{"resourceRequest": map[string]any{"cpu": "200m", "memory": "256Mi"}}
	with := func(change func(o map[string]any)) map[string]any {
		o := workload()
		change(o)
		return o
	}
	spec := func(o map[string]any) map[string]any { return o["spec"].(map[string]any) }
	status := func(o map[string]any) map[string]any { return o["status"].(map[string]any) }
	items := []any{
		map[string]any{"clusterName": "member1", "applied": true, "health": "Healthy",
			"status": map[string]any{"replicas": int64(2), "readyReplicas": int64(1)}},
		map[string]any{"clusterName": "member2", "applied": false},
		map[string]any{"clusterName": "member3", "applied": true, "status": map[string]any{"replicas": int64(1)}},
	}
	tests := []struct {
		name    string
		fn      string
		nret, i int
		convert func(Results, int) (any, error)
		args    []any
		want    any
	}{
		{name: "GetReplicas replicas", fn: "GetReplicas", nret: 2, i: 0, convert: integer, args: []any{workload()}, want: int64(3)},
		{name: "GetReplicas requires", fn: "GetReplicas", nret: 2, i: 1, convert: value, args: []any{workload()}, want: requires},
		{name: "GetComponents", fn: "GetComponents", nret: 1, convert: list, args: []any{workload()}, want: []any{
			map[string]any{"name": "leader", "replicas": int64(1), "replicaRequirements": requires},
			map[string]any{"name": "worker", "replicas": int64(2), "replicaRequirements": requires},
		}},
		{name: "ReviseReplica", fn: "ReviseReplica", nret: 1, convert: object, args: []any{workload(), int64(7)},
			want: with(func(o map[string]any) { spec(o)["replicas"] = int64(7) })},
		{name: "Retain", fn: "Retain", nret: 1, convert: object,
			args: []any{workload(), with(func(o map[string]any) { spec(o)["paused"] = true })},
			want: with(func(o map[string]any) { spec(o)["paused"] = true })},
		{name: "ReflectStatus", fn: "ReflectStatus", nret: 1, convert: object, args: []any{workload()}, want: workload()["status"]},
		// The script returns {} when there is no status: an empty object.
		{name: "ReflectStatus without status", fn: "ReflectStatus", nret: 1, convert: object,
			args: []any{with(func(o map[string]any) { delete(o, "status") })}, want: map[string]any{}},
		// The original status says conditions is a list, so the script's
		// empty table becomes [].
		{name: "AggregateStatus", fn: "AggregateStatus", nret: 1, convert: object, args: []any{workload(), items},
			want: with(func(o map[string]any) {
				o["status"] = map[string]any{
					"replicas": int64(3), "readyReplicas": int64(1), "conditions": []any{},
					"clusters": "member1=true,member2=false,member3=true",
				}
			})},
		{name: "AggregateStatus without items", fn: "AggregateStatus", nret: 1, convert: object, args: []any{workload(), []any{}},
			want: with(func(o map[string]any) {
				o["status"] = map[string]any{"replicas": int64(0), "readyReplicas": int64(0), "conditions": []any{}, "clusters": ""}
			})},
		{name: "InterpretHealth healthy", fn: "InterpretHealth", nret: 1, convert: boolean, args: []any{workload()}, want: true},
		{name: "InterpretHealth unhealthy", fn: "InterpretHealth", nret: 1, convert: boolean,
			args: []any{with(func(o map[string]any) { status(o)["readyReplicas"] = int64(2) })}, want: false},
		{name: "GetDependencies", fn: "GetDependencies", nret: 1, convert: list, args: []any{workload()}, want: []any{
			map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "prod", "name": "app"},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "prod", "name": "w-config"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := karmadaCall(t, vm, tt.fn, tt.nret, tt.i, tt.convert, tt.args...)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
