package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func requestOf2(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestGetReplicas(t *testing.T) {
	tests := []struct {
		name         string
		obj          *unstructured.Unstructured
		wantReplicas int32
		want         *workv1alpha2.ReplicaRequirements
		wantErr      bool
	}{{
		name: "deployment sums its containers",
		obj: deployment().set(int64(3), "spec", "replicas").set(list(
			container("web", map[string]any{"cpu": "250m", "memory": "128Mi"}),
			container("sidecar", map[string]any{"cpu": "50m", "memory": "32Mi"}),
		), "spec", "template", "spec", "containers").u(),
		wantReplicas: 3,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("cpu", "300m", "memory", "160Mi"), Namespace: "shop"},
	}, {
		name:         "deployment without replicas or requests",
		obj:          deployment().set(list(container("web", nil)), "spec", "template", "spec", "containers").u(),
		wantReplicas: 1,
	}, {
		name: "limits stand in for requests, overhead is added",
		obj: deployment().set(int64(2), "spec", "replicas").
			set(list(map[string]any{"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}}),
				"spec", "template", "spec", "containers").
			set(map[string]any{"cpu": "10m"}, "spec", "template", "spec", "overhead").u(),
		wantReplicas: 2,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("cpu", "1010m", "memory", "1Gi"), Namespace: "shop"},
	}, {
		name: "init containers: the peak wins over the sum",
		obj: deployment().
			set(list(container("app", map[string]any{"cpu": "100m"})), "spec", "template", "spec", "containers").
			set(list(container("migrate", map[string]any{"cpu": "500m", "memory": "64Mi"})), "spec", "template", "spec", "initContainers").u(),
		wantReplicas: 1,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("cpu", "500m", "memory", "64Mi"), Namespace: "shop"},
	}, {
		name: "sidecars run next to later init containers and the app",
		obj: deployment().
			set(list(container("app", map[string]any{"cpu": "100m"})), "spec", "template", "spec", "containers").
			set(list(
				map[string]any{"name": "proxy", "restartPolicy": "Always", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}},
				container("setup", map[string]any{"cpu": "150m"}),
			), "spec", "template", "spec", "initContainers").u(),
		wantReplicas: 1,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("cpu", "250m"), Namespace: "shop"},
	}, {
		// As the API server defaults the pod: a pod-level request left out
		// takes what the containers request, the pod-level limit only what
		// no container requests.
		name: "pod-level limits stand in only for what no container requests",
		obj: deployment().
			set(list(container("app", map[string]any{"memory": "64Mi"})), "spec", "template", "spec", "containers").
			set(map[string]any{"limits": map[string]any{"cpu": "2", "memory": "4Gi"}}, "spec", "template", "spec", "resources").u(),
		wantReplicas: 1,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("cpu", "2", "memory", "64Mi"), Namespace: "shop"},
	}, {
		name: "node claim and priority class",
		obj: newObj("apps/v1", "StatefulSet").set(int64(4), "spec", "replicas").
			set(map[string]any{"disk": "ssd"}, "spec", "template", "spec", "nodeSelector").
			set(list(map[string]any{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}), "spec", "template", "spec", "tolerations").
			set(map[string]any{"nodeSelectorTerms": list(map[string]any{"matchExpressions": list(
				map[string]any{"key": "zone", "operator": "In", "values": list("a", "b")})})},
				"spec", "template", "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution").
			set("high", "spec", "template", "spec", "priorityClassName").u(),
		wantReplicas: 4,
		want: &workv1alpha2.ReplicaRequirements{
			NodeClaim: &workv1alpha2.NodeClaim{
				NodeSelector: map[string]string{"disk": "ssd"},
				Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}},
			},
			Namespace:         "shop",
			PriorityClassName: "high",
		},
	}, {
		name: "replicaset",
		obj: newObj("apps/v1", "ReplicaSet").set(int64(0), "spec", "replicas").
			set(list(container("c", map[string]any{"nvidia.com/gpu": int64(1)})), "spec", "template", "spec", "containers").u(),
		wantReplicas: 0,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("nvidia.com/gpu", "1"), Namespace: "shop"},
	}, {
		name:         "job runs parallelism pods",
		obj:          newObj("batch/v1", "Job").set(int64(5), "spec", "parallelism").set(int64(20), "spec", "completions").u(),
		wantReplicas: 5,
	}, {
		name:         "job never runs more pods than completions",
		obj:          newObj("batch/v1", "Job").set(int64(5), "spec", "parallelism").set(int64(3), "spec", "completions").u(),
		wantReplicas: 3,
	}, {
		name:         "job parallelism defaults to 1",
		obj:          newObj("batch/v1", "Job").u(),
		wantReplicas: 1,
	}, {
		name:         "pod is one replica",
		obj:          newObj("v1", "Pod").set(list(container("c", map[string]any{"memory": "512Mi"})), "spec", "containers").u(),
		wantReplicas: 1,
		want:         &workv1alpha2.ReplicaRequirements{ResourceRequest: requestOf2("memory", "512Mi"), Namespace: "shop"},
	}, {
		name:    "replicas of the wrong type",
		obj:     deployment().set("three", "spec", "replicas").u(),
		wantErr: true,
	}, {
		name:    "bad quantity",
		obj:     deployment().set(list(container("c", map[string]any{"cpu": "lots"})), "spec", "template", "spec", "containers").u(),
		wantErr: true,
	}, {
		name:    "containers not a list",
		obj:     deployment().set("web", "spec", "template", "spec", "containers").u(),
		wantErr: true,
	}}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replicas, requires, handled, err := n.GetReplicas(ctx(), tt.obj)
			if !handled {
				t.Fatal("not handled")
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if replicas != tt.wantReplicas {
				t.Errorf("replicas = %d, want %d", replicas, tt.wantReplicas)
			}
			if diff := cmp.Diff(tt.want, requires, quantityCmp); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookEnabled(t *testing.T) {
	n := New()
	for _, tt := range []struct {
		gvk  string
		op   string
		want bool
	}{
		{"apps/v1/Deployment", "InterpretReplica", true},
		{"apps/v1/DaemonSet", "InterpretReplica", false},
		{"apps/v1/DaemonSet", "AggregateStatus", true},
		{"v1/Service", "Retain", true},
		{"v1/ConfigMap", "Retain", false},
		{"v1/ConfigMap", "InterpretStatus", true},
		{"example.com/v1/Widget", "InterpretHealth", false},
		{"apps/v1/Deployment", "InterpretComponent", false},
	} {
		u := &unstructured.Unstructured{}
		apiVersion, kind := tt.gvk[:len(tt.gvk)-len(kindOf(tt.gvk))-1], kindOf(tt.gvk)
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		if got := n.HookEnabled(u.GroupVersionKind(), opOf(tt.op)); got != tt.want {
			t.Errorf("HookEnabled(%s, %s) = %v, want %v", tt.gvk, tt.op, got, tt.want)
		}
	}
}
