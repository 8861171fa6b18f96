package lua

import (
	"context"
	"testing"
)

// deployment returns an unstructured Deployment as an informer would hand it
// over: metadata with labels, annotations and a managedFields entry, a pod
// template with two containers, and status.
func deployment() map[string]any {
	container := func(name string, cpu, mem string) map[string]any {
		return map[string]any{
			"name":            name,
			"image":           "registry.example.com/" + name + ":1.2.3",
			"imagePullPolicy": "IfNotPresent",
			"ports":           []any{map[string]any{"containerPort": int64(8080), "name": "http", "protocol": "TCP"}},
			"env": []any{
				map[string]any{"name": "MODE", "value": "production"},
				map[string]any{"name": "TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "api-token", "key": "token"}}},
			},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": cpu, "memory": mem},
				"limits":   map[string]any{"cpu": "1", "memory": "512Mi"},
			},
			"readinessProbe": map[string]any{
				"httpGet":       map[string]any{"path": "/healthz", "port": int64(8080), "scheme": "HTTP"},
				"periodSeconds": int64(10), "timeoutSeconds": int64(1), "successThreshold": int64(1), "failureThreshold": int64(3),
			},
			"volumeMounts":             []any{map[string]any{"name": "config", "mountPath": "/etc/app"}},
			"terminationMessagePath":   "/dev/termination-log",
			"terminationMessagePolicy": "File",
		}
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":              "web",
			"namespace":         "shop",
			"uid":               "6c3a8d4e-1f0b-4e39-9d1c-0c6f1b2a7e55",
			"resourceVersion":   "123456",
			"generation":        int64(4),
			"creationTimestamp": "2025-01-02T03:04:05Z",
			"labels":            map[string]any{"app": "web", "tier": "frontend"},
			"annotations":       map[string]any{"deployment.kubernetes.io/revision": "4"},
			"managedFields": []any{map[string]any{
				"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
				"time": "2025-01-02T03:04:05Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}},
			}},
		},
		"spec": map[string]any{
			"replicas":                int64(3),
			"revisionHistoryLimit":    int64(10),
			"progressDeadlineSeconds": int64(600),
			"selector":                map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"strategy": map[string]any{"type": "RollingUpdate",
				"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web", "tier": "frontend"}},
				"spec": map[string]any{
					"containers":                    []any{container("web", "250m", "128Mi"), container("sidecar", "50m", "32Mi")},
					"volumes":                       []any{map[string]any{"name": "config", "configMap": map[string]any{"name": "web-config"}}},
					"nodeSelector":                  map[string]any{"topology.kubernetes.io/zone": "eu-1a"},
					"restartPolicy":                 "Always",
					"dnsPolicy":                     "ClusterFirst",
					"schedulerName":                 "default-scheduler",
					"terminationGracePeriodSeconds": int64(30),
					"securityContext":               map[string]any{},
				},
			},
		},
		"status": map[string]any{
			"observedGeneration": int64(4), "replicas": int64(3), "readyReplicas": int64(3),
			"availableReplicas": int64(3), "updatedReplicas": int64(3),
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			},
		},
	}
}

var benchScripts = []struct {
	name, function, code string
	args                 func() []any
	convert              func(Results) error
}{
	{
		// The fixed cost of a call: pool, guard, chunk, environment.
		name: "Noop", function: "F",
		code:    `function F() return true end`,
		args:    func() []any { return nil },
		convert: func(r Results) error { _, err := r.Bool(0); return err },
	},
	{
		name: "GetReplicas", function: "GetReplicas",
		code: `
function GetReplicas(obj)
  local replica = obj.spec.replicas
  local requires = {resourceRequest = obj.spec.template.spec.containers[1].resources.requests}
  return replica, requires
end`,
		args: func() []any { return []any{deployment()} },
		convert: func(r Results) error {
			if _, err := r.Int64(0); err != nil {
				return err
			}
			_, err := r.Value(1)
			return err
		},
	},
	{
		name: "GetReplicasKube", function: "GetReplicas",
		code: `
local kube = require("kube")
function GetReplicas(obj)
  local replica = obj.spec.replicas
  local requirement = kube.accuratePodRequirements(obj.spec.template)
  return replica, requirement
end`,
		args: func() []any { return []any{deployment()} },
		convert: func(r Results) error {
			if _, err := r.Int64(0); err != nil {
				return err
			}
			_, err := r.Value(1)
			return err
		},
	},
	{
		name: "ReviseReplica", function: "ReviseReplica",
		code: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`,
		args: func() []any { return []any{deployment(), int64(5)} },
		convert: func(r Results) error {
			_, err := r.Object(0)
			return err
		},
	},
	{
		// As above, for a caller that owns the object and lets the result
		// share the parts the script did not touch (no deep copy).
		name: "ReviseReplicaShared", function: "ReviseReplica",
		code: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end`,
		args: func() []any { return []any{deployment(), int64(5)} },
		convert: func(r Results) error {
			_, err := r.Shared().Object(0)
			return err
		},
	},
}

// BenchmarkCall measures one interpreter call as the resource interpreter
// makes it: arguments converted to Lua, chunk and function run, results
// converted back.
func BenchmarkCall(b *testing.B) {
	for _, bs := range benchScripts {
		script := Script{Name: bs.name, Code: bs.code}
		args := bs.args()
		b.Run(bs.name, func(b *testing.B) {
			vm := New()
			defer vm.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r, err := vm.Call(ctx, script, bs.function, 2, args...)
				if err == nil {
					err = bs.convert(r)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bs.name+"/parallel", func(b *testing.B) {
			vm := New()
			defer vm.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, err := vm.Call(ctx, script, bs.function, 2, args...)
					if err == nil {
						err = bs.convert(r)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
