package lua

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResourceAdd(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{`"100m", "200m"`, "300m"},
		{`"1", "500m"`, "1500m"},
		{`"1Gi", "512Mi"`, "1536Mi"},
		{`"1G", "500M"`, "1500M"},
		{`"1Gi", "1G"`, "2073741824"},
		{`nil, "1", nil`, "1"},
		{``, "0"},
		{`1, 0.5`, "1500m"},
		{`"2", 3`, "5"},
		{`"0.5", "250m"`, "750m"},
	}
	vm := New()
	defer vm.Close()
	for _, tt := range tests {
		got := callOn(t, vm, `local kube = require("kube") function F() return kube.resourceAdd(`+tt.args+`) end`)
		if got != tt.want {
			t.Errorf("resourceAdd(%s) = %v, want %s", tt.args, got, tt.want)
		}
	}
	for _, args := range []string{`"abc"`, `"1", {}`} {
		_, err := vm.Call(context.Background(), Script{Code: `local kube = require("kube") function F() return kube.resourceAdd(` + args + `) end`}, "F", 1)
		if err == nil || !strings.Contains(err.Error(), "kube.resourceAdd: argument #") {
			t.Errorf("resourceAdd(%s): got %v", args, err)
		}
	}
}

func TestGetResourceQuantity(t *testing.T) {
	vm := New()
	defer vm.Close()
	for arg, want := range map[string]any{
		`"100m"`: 0.1, `"1Gi"`: int64(1073741824), `"2"`: int64(2), `"1.5"`: 1.5, `3`: int64(3), `nil`: int64(0), `"250M"`: int64(250000000),
	} {
		got := callOn(t, vm, `local kube = require("kube") function F() return kube.getResourceQuantity(`+arg+`) end`)
		if got != want {
			t.Errorf("getResourceQuantity(%s) = %#v, want %#v", arg, got, want)
		}
	}
}

func container(name string, requests, limits map[string]any) map[string]any {
	c := map[string]any{"name": name, "image": "img"}
	res := map[string]any{}
	if requests != nil {
		res["requests"] = requests
	}
	if limits != nil {
		res["limits"] = limits
	}
	c["resources"] = res
	return c
}

func rl(cpu, mem string) map[string]any {
	out := map[string]any{}
	if cpu != "" {
		out["cpu"] = cpu
	}
	if mem != "" {
		out["memory"] = mem
	}
	return out
}

func TestAccuratePodRequirements(t *testing.T) {
	always := func(c map[string]any) map[string]any { c["restartPolicy"] = "Always"; return c }
	tests := []struct {
		name string
		spec map[string]any
		want any
	}{
		{
			name: "containers are summed",
			spec: map[string]any{"containers": []any{container("a", rl("100m", "64Mi"), nil), container("b", rl("250m", "1Gi"), nil)}},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "350m", "memory": "1088Mi"}},
		},
		{
			name: "limits stand in for missing requests",
			spec: map[string]any{"containers": []any{container("a", rl("100m", ""), rl("1", "256Mi"))}},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "100m", "memory": "256Mi"}},
		},
		{
			name: "the largest init container wins when larger than the app",
			spec: map[string]any{
				"containers":     []any{container("a", rl("100m", "100Mi"), nil)},
				"initContainers": []any{container("i1", rl("500m", "50Mi"), nil), container("i2", rl("200m", "300Mi"), nil)},
			},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "500m", "memory": "300Mi"}},
		},
		{
			name: "sidecars run next to the app and to later init containers; overhead on top",
			spec: map[string]any{
				"containers": []any{container("app", rl("100m", "100Mi"), nil)},
				"initContainers": []any{
					container("init1", rl("500m", "50Mi"), nil),
					always(container("sidecar", rl("50m", "20Mi"), nil)),
					container("init2", rl("200m", "300Mi"), nil),
				},
				"overhead": rl("10m", "10Mi"),
			},
			// app phase: 100m+50m / 100Mi+20Mi; init peak: cpu 500m (init1), memory 300Mi+20Mi (init2 + sidecar)
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "510m", "memory": "330Mi"}},
		},
		{
			name: "sidecars alone add to the app",
			spec: map[string]any{
				"containers":     []any{container("app", rl("1", "1Gi"), nil)},
				"initContainers": []any{always(container("s1", rl("500m", "512Mi"), nil)), always(container("s2", rl("500m", "512Mi"), nil))},
			},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "2", "memory": "2Gi"}},
		},
		{
			name: "pod-level requests replace cpu and memory",
			spec: map[string]any{
				"containers": []any{container("a", map[string]any{"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}, nil)},
				"resources":  map[string]any{"requests": rl("2", "4Gi")},
			},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}},
		},
		{
			// The pod's defaulting: a pod-level request left out takes what
			// the containers request, and the pod-level limit only where
			// they request nothing.
			name: "a pod-level limit stands in only for what no container requests",
			spec: map[string]any{
				"containers": []any{container("a", rl("", "64Mi"), nil)},
				"resources":  map[string]any{"limits": rl("2", "4Gi")},
			},
			want: map[string]any{"resourceRequest": map[string]any{"cpu": "2", "memory": "64Mi"}},
		},
		{
			name: "node claim and priority class",
			spec: map[string]any{
				"containers":        []any{container("a", rl("100m", ""), nil)},
				"nodeSelector":      map[string]any{"disk": "ssd"},
				"tolerations":       []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(30)}},
				"priorityClassName": "high",
				"affinity": map[string]any{"nodeAffinity": map[string]any{
					"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{
						"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a", "b"}}},
					}}},
					"preferredDuringSchedulingIgnoredDuringExecution": []any{},
				}},
			},
			want: map[string]any{
				"nodeClaim": map[string]any{
					"nodeSelector": map[string]any{"disk": "ssd"},
					"tolerations":  []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(30)}},
					"hardNodeAffinity": map[string]any{"nodeSelectorTerms": []any{map[string]any{
						"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a", "b"}}},
					}}},
				},
				"resourceRequest":   map[string]any{"cpu": "100m"},
				"priorityClassName": "high",
			},
		},
		{
			name: "node claim without requests",
			spec: map[string]any{"containers": []any{map[string]any{"name": "a"}}, "nodeSelector": map[string]any{"a": "b"}},
			want: map[string]any{"nodeClaim": map[string]any{"nodeSelector": map[string]any{"a": "b"}}},
		},
		{
			name: "nothing to claim is nil",
			spec: map[string]any{"containers": []any{map[string]any{"name": "a"}}, "nodeSelector": map[string]any{}},
			want: nil,
		},
	}
	code := `local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end`
	vm := New()
	defer vm.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := map[string]any{"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": tt.spec}}}
			r, err := vm.Call(context.Background(), Script{Name: "r", Code: code}, "GetReplicas", 2, obj)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Value(1)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// A template built in Lua works as well as one from the argument.
	got := callOn(t, vm, `local kube = require("kube")
function F()
  return kube.accuratePodRequirements({spec = {containers = {{name = "a", resources = {requests = {cpu = "1", memory = "1Gi"}}}}}})
end`)
	if d := cmp.Diff(map[string]any{"resourceRequest": map[string]any{"cpu": "1", "memory": "1Gi"}}, got); d != "" {
		t.Errorf("Lua template (-want +got):\n%s", d)
	}
	_, err := vm.Call(context.Background(), Script{Code: `local kube = require("kube")
function F() return kube.accuratePodRequirements({spec = {containers = {{resources = {requests = {cpu = "lots"}}}}}}) end`}, "F", 1)
	if err == nil || !strings.Contains(err.Error(), "kube.accuratePodRequirements") {
		t.Errorf("bad quantity: got %v", err)
	}
}

func TestGetPodDependencies(t *testing.T) {
	envFrom := func(kind, name string) map[string]any {
		return map[string]any{strings.ToLower(kind[:1]) + kind[1:] + "Ref": map[string]any{"name": name}}
	}
	spec := map[string]any{
		"serviceAccountName": "runner",
		"imagePullSecrets":   []any{map[string]any{"name": "pull"}},
		"initContainers":     []any{map[string]any{"name": "init", "envFrom": []any{envFrom("configMap", "init-cm")}}},
		"containers": []any{
			map[string]any{
				"name":    "app",
				"envFrom": []any{envFrom("configMap", "app-cm"), envFrom("secret", "app-secret")},
				"env": []any{
					map[string]any{"name": "A", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "key-cm", "key": "a"}}},
					map[string]any{"name": "B", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "key-secret", "key": "b"}}},
					map[string]any{"name": "C", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
					map[string]any{"name": "D", "value": "plain"},
				},
			},
			// The same references again: listed once.
			map[string]any{"name": "dup", "envFrom": []any{envFrom("configMap", "app-cm")}},
		},
		"ephemeralContainers": []any{map[string]any{"name": "debug", "envFrom": []any{envFrom("secret", "debug-secret")}}},
		"volumes": []any{
			map[string]any{"name": "v1", "configMap": map[string]any{"name": "vol-cm"}},
			map[string]any{"name": "v2", "secret": map[string]any{"secretName": "vol-secret"}},
			map[string]any{"name": "v3", "persistentVolumeClaim": map[string]any{"claimName": "data"}},
			map[string]any{"name": "v4", "projected": map[string]any{"sources": []any{
				map[string]any{"configMap": map[string]any{"name": "proj-cm"}},
				map[string]any{"secret": map[string]any{"name": "proj-secret"}},
				map[string]any{"serviceAccountToken": map[string]any{"path": "token"}},
			}}},
			map[string]any{"name": "v5", "csi": map[string]any{"driver": "d", "nodePublishSecretRef": map[string]any{"name": "csi-secret"}}},
			map[string]any{"name": "v6", "azureFile": map[string]any{"secretName": "azure-secret", "shareName": "s"}},
			map[string]any{"name": "v7", "cephfs": map[string]any{"monitors": []any{"m"}, "secretRef": map[string]any{"name": "ceph-secret"}}},
			map[string]any{"name": "v8", "emptyDir": map[string]any{}},
		},
	}
	dep := func(kind, name string) any {
		return map[string]any{"apiVersion": "v1", "kind": kind, "namespace": "shop", "name": name}
	}
	want := []any{
		dep("ConfigMap", "app-cm"), dep("ConfigMap", "init-cm"), dep("ConfigMap", "key-cm"), dep("ConfigMap", "proj-cm"), dep("ConfigMap", "vol-cm"),
		dep("Secret", "app-secret"), dep("Secret", "azure-secret"), dep("Secret", "ceph-secret"), dep("Secret", "csi-secret"),
		dep("Secret", "debug-secret"), dep("Secret", "key-secret"), dep("Secret", "proj-secret"), dep("Secret", "pull"), dep("Secret", "vol-secret"),
		dep("ServiceAccount", "runner"),
		dep("PersistentVolumeClaim", "data"),
	}
	code := `local kube = require("kube")
function GetDependencies(obj)
  return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace)
end`
	obj := map[string]any{"metadata": map[string]any{"namespace": "shop"}, "spec": map[string]any{"template": map[string]any{"spec": spec}}}
	vm := New()
	defer vm.Close()
	r, err := vm.Call(context.Background(), Script{Name: "deps", Code: code}, "GetDependencies", 1, obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.List(0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	// No namespace means "default"; the default service account is not a dependency;
	// no references give an empty list.
	got2 := callOn(t, vm, `local kube = require("kube")
function F()
  return {
    kube.getPodDependencies({spec = {serviceAccountName = "default", volumes = {{name = "c", configMap = {name = "x"}}}}}, nil),
    kube.getPodDependencies({spec = {containers = {{name = "a"}}}}, "ns"),
  }
end`)
	want2 := []any{
		[]any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "x"}},
		[]any{},
	}
	if d := cmp.Diff(want2, got2); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
