package interpreter_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/customization"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/lua"
)

// Benchmarks of one interpreter call through the chain, as controllers
// make it:
//
//	go test ./internal/interpreter -run '^$' -bench . -benchmem
//
// Lua: a Deployment interpreted by a user customization, and a
// FlinkDeployment-like custom resource. Native: the Go rules for
// Deployments. Objects handed over (ReviseReplica, AggregateStatus) are
// reused between iterations: the copy a caller makes is its own cost.

// benchDeployment is a Deployment as an informer hands it over.
func benchDeployment() *unstructured.Unstructured {
	c := func(name, cpu, mem string) map[string]any {
		return map[string]any{
			"name": name, "image": "registry.example.com/" + name + ":1.2.3", "imagePullPolicy": "IfNotPresent",
			"ports": []any{map[string]any{"containerPort": int64(8080), "name": "http", "protocol": "TCP"}},
			"env": []any{map[string]any{"name": "MODE", "value": "production"},
				map[string]any{"name": "TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "api-token", "key": "token"}}}},
			"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": mem},
				"limits": map[string]any{"cpu": "1", "memory": "512Mi"}},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": int64(8080)}, "periodSeconds": int64(10)},
			"volumeMounts":   []any{map[string]any{"name": "config", "mountPath": "/etc/app"}},
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "6c3a8d4e-1f0b-4e39-9d1c-0c6f1b2a7e55", "resourceVersion": "123456",
			"generation": int64(4), "creationTimestamp": "2025-01-02T03:04:05Z",
			"labels":      map[string]any{"app": "web", "tier": "frontend"},
			"annotations": map[string]any{"deployment.kubernetes.io/revision": "4"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}}},
		},
		"spec": map[string]any{
			"replicas": int64(3), "revisionHistoryLimit": int64(10), "progressDeadlineSeconds": int64(600),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web", "tier": "frontend"}},
				"spec": map[string]any{
					"containers":    []any{c("web", "250m", "128Mi"), c("sidecar", "50m", "32Mi")},
					"volumes":       []any{map[string]any{"name": "config", "configMap": map[string]any{"name": "web-config"}}},
					"nodeSelector":  map[string]any{"topology.kubernetes.io/zone": "eu-1a"},
					"restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
					"terminationGracePeriodSeconds": int64(30),
				},
			},
		},
		"status": map[string]any{"observedGeneration": int64(4), "replicas": int64(3), "readyReplicas": int64(3),
			"availableReplicas": int64(3), "updatedReplicas": int64(3),
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}}},
	}}
}

// benchFlink is a FlinkDeployment (flink.apache.org/v1beta1) of a
// session job with 12-way parallelism on 4-slot task managers.
func benchFlink() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "wordcount", "namespace": "streaming", "generation": int64(2)},
		"spec": map[string]any{
			"image": "flink:1.20", "flinkVersion": "v1_20", "serviceAccount": "flink",
			"flinkConfiguration": map[string]any{"taskmanager.numberOfTaskSlots": "4", "state.backend.type": "rocksdb"},
			"jobManager":         map[string]any{"replicas": int64(1), "resource": map[string]any{"cpu": int64(1), "memory": "2048m"}},
			"taskManager":        map[string]any{"resource": map[string]any{"cpu": int64(2), "memory": "4096m"}},
			"podTemplate": map[string]any{"spec": map[string]any{
				"nodeSelector": map[string]any{"workload": "streaming"},
				"containers":   []any{map[string]any{"name": "flink-main-container", "env": []any{map[string]any{"name": "ENV", "value": "prod"}}}},
			}},
			"job": map[string]any{"jarURI": "local:///opt/flink/examples/WordCount.jar", "parallelism": int64(12), "upgradeMode": "savepoint", "state": "running"},
		},
		"status": map[string]any{"jobStatus": map[string]any{"state": "RUNNING", "jobId": "c0ffee"}, "lifecycleState": "STABLE",
			"jobManagerDeploymentStatus": "READY", "observedGeneration": int64(2)},
	}}
}

func benchCustomizations() []*configv1alpha1.ResourceInterpreterCustomization {
	deploy := ric("bench-deployment", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `
local kube = require("kube")
function GetReplicas(obj)
  local replica = obj.spec.replicas
  local requirement = kube.accuratePodRequirements(obj.spec.template)
  return replica, requirement
end`},
		ReplicaRevision: &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`},
		StatusAggregation: &configv1alpha1.StatusAggregation{LuaScript: `
function AggregateStatus(desiredObj, statusItems)
  if desiredObj.status == nil then
    desiredObj.status = {}
  end
  local replicas, ready, updated, available, unavailable = 0, 0, 0, 0, 0
  local observed = true
  for i = 1, #statusItems do
    local s = statusItems[i].status
    if s ~= nil then
      replicas = replicas + (s.replicas or 0)
      ready = ready + (s.readyReplicas or 0)
      updated = updated + (s.updatedReplicas or 0)
      available = available + (s.availableReplicas or 0)
      unavailable = unavailable + (s.unavailableReplicas or 0)
      if s.observedGeneration ~= s.generation then
        observed = false
      end
    else
      observed = false
    end
  end
  desiredObj.status.replicas = replicas
  desiredObj.status.readyReplicas = ready
  desiredObj.status.updatedReplicas = updated
  desiredObj.status.availableReplicas = available
  desiredObj.status.unavailableReplicas = unavailable
  if observed then
    desiredObj.status.observedGeneration = desiredObj.metadata.generation
  end
  return desiredObj
end`},
	})
	flink := ric("bench-flink", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `
local kube = require("kube")
local function slots(obj)
  local conf = obj.spec.flinkConfiguration
  local n = conf and tonumber(conf["taskmanager.numberOfTaskSlots"]) or 1
  return n
end
function GetReplicas(obj)
  local jm = obj.spec.jobManager.replicas or 1
  local parallelism = obj.spec.job.parallelism or 1
  local tm = obj.spec.taskManager.replicas or math.ceil(parallelism / slots(obj))
  local requires = {
    resourceRequest = {
      cpu = kube.resourceAdd(obj.spec.taskManager.resource.cpu),
      memory = kube.resourceAdd(string.gsub(obj.spec.taskManager.resource.memory, "m$", "Mi")),
    },
    nodeClaim = {nodeSelector = obj.spec.podTemplate.spec.nodeSelector},
  }
  return jm + tm, requires
end`},
		ReplicaRevision: &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  local conf = obj.spec.flinkConfiguration
  local slots = conf and tonumber(conf["taskmanager.numberOfTaskSlots"]) or 1
  local tm = desiredReplica - (obj.spec.jobManager.replicas or 1)
  if tm < 1 then tm = 1 end
  obj.spec.job.parallelism = tm * slots
  return obj
end`},
		StatusAggregation: &configv1alpha1.StatusAggregation{LuaScript: `
function AggregateStatus(desiredObj, statusItems)
  local status = {jobStatus = {state = "RUNNING"}, lifecycleState = "STABLE"}
  for i = 1, #statusItems do
    local s = statusItems[i].status
    if s == nil or s.jobStatus == nil or s.jobStatus.state ~= "RUNNING" then
      status.jobStatus.state = s and s.jobStatus and s.jobStatus.state or "UNKNOWN"
    end
    if s ~= nil and s.lifecycleState ~= "STABLE" then
      status.lifecycleState = s.lifecycleState
    end
  end
  desiredObj.status = status
  return desiredObj
end`},
	}, "flink.apache.org/v1beta1", "FlinkDeployment")
	return []*configv1alpha1.ResourceInterpreterCustomization{deploy, flink}
}

func deploymentItems() []workv1alpha2.AggregatedStatusItem {
	items := make([]workv1alpha2.AggregatedStatusItem, 3)
	for i, name := range []string{"member1", "member2", "member3"} {
		items[i] = workv1alpha2.AggregatedStatusItem{ClusterName: name, Applied: true, Health: workv1alpha2.ResourceHealthy,
			Status: rawJSON(map[string]any{"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
				"observedGeneration": 4, "generation": 4, "resourceTemplateGeneration": 4})}
	}
	return items
}

func flinkItems() []workv1alpha2.AggregatedStatusItem {
	items := make([]workv1alpha2.AggregatedStatusItem, 3)
	for i, name := range []string{"member1", "member2", "member3"} {
		items[i] = workv1alpha2.AggregatedStatusItem{ClusterName: name, Applied: true,
			Status: rawJSON(map[string]any{"jobStatus": map[string]any{"state": "RUNNING", "jobId": "c0ffee"}, "lifecycleState": "STABLE"})}
	}
	return items
}

type benchCase struct {
	name  string
	chain *interpreter.Chain
	obj   func() *unstructured.Unstructured
	items []workv1alpha2.AggregatedStatusItem
}

func benchCases(b *testing.B) []benchCase {
	vm := lua.New()
	b.Cleanup(vm.Close)
	rics := customization.NewStore(vm)
	for _, c := range benchCustomizations() {
		rics.Apply(ctx(), c)
	}
	scripted := interpreter.NewChain(rics, native.New())
	nat := interpreter.NewChain(customization.NewStore(vm), native.New())
	return []benchCase{
		{"lua/Deployment", scripted, benchDeployment, deploymentItems()},
		{"lua/FlinkDeployment", scripted, benchFlink, flinkItems()},
		{"native/Deployment", nat, benchDeployment, deploymentItems()},
	}
}

func runBench(b *testing.B, op func(c *interpreter.Chain, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error) {
	for _, bc := range benchCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			obj := bc.obj()
			if err := op(bc.chain, obj, bc.items); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if err := op(bc.chain, obj, bc.items); err != nil {
					b.Fatal(err)
				}
			}
			if used := cpuTime() - start; used > 0 {
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			defer func() {
				if used := cpuTime() - start; used > 0 {
					b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			}()
			b.RunParallel(func(pb *testing.PB) {
				obj := bc.obj()
				for pb.Next() {
					if err := op(bc.chain, obj, bc.items); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkGetReplicas(b *testing.B) {
	runBench(b, func(c *interpreter.Chain, obj *unstructured.Unstructured, _ []workv1alpha2.AggregatedStatusItem) error {
		_, _, err := c.GetReplicas(ctx(), obj)
		return err
	})
}

func BenchmarkReviseReplica(b *testing.B) {
	runBench(b, func(c *interpreter.Chain, obj *unstructured.Unstructured, _ []workv1alpha2.AggregatedStatusItem) error {
		_, err := c.ReviseReplica(ctx(), obj, 5)
		return err
	})
}

func BenchmarkAggregateStatus(b *testing.B) {
	runBench(b, func(c *interpreter.Chain, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
		_, err := c.AggregateStatus(ctx(), obj, items)
		return err
	})
}

// BenchmarkDeepCopy is the copy a caller makes of a template before handing
// it to ReviseReplica, for comparison.
func BenchmarkDeepCopy(b *testing.B) {
	obj := benchDeployment()
	b.ReportAllocs()
	for b.Loop() {
		_ = runtime.DeepCopyJSON(obj.Object)
	}
}
