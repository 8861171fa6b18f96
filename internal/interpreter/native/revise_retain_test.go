package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestReviseReplica(t *testing.T) {
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		replicas int64
		want     *unstructured.Unstructured
	}{
		{"deployment", deployment().set(int64(10), "spec", "replicas").u(), 4,
			deployment().set(int64(4), "spec", "replicas").u()},
		{"statefulset without spec", newObj("apps/v1", "StatefulSet").u(), 2,
			newObj("apps/v1", "StatefulSet").set(int64(2), "spec", "replicas").u()},
		{"replicaset", newObj("apps/v1", "ReplicaSet").set(int64(1), "spec", "replicas").u(), 0,
			newObj("apps/v1", "ReplicaSet").set(int64(0), "spec", "replicas").u()},
		{"job without completions", newObj("batch/v1", "Job").set(int64(6), "spec", "parallelism").u(), 2,
			newObj("batch/v1", "Job").set(int64(2), "spec", "parallelism").u()},
		{"job completions split by the share of parallelism, rounded up",
			newObj("batch/v1", "Job").set(int64(4), "spec", "parallelism").set(int64(10), "spec", "completions").u(), 1,
			newObj("batch/v1", "Job").set(int64(1), "spec", "parallelism").set(int64(3), "spec", "completions").u()},
		{"job with fewer completions than parallelism",
			newObj("batch/v1", "Job").set(int64(5), "spec", "parallelism").set(int64(3), "spec", "completions").u(), 2,
			newObj("batch/v1", "Job").set(int64(2), "spec", "parallelism").set(int64(2), "spec", "completions").u()},
		{"job duplicated to a member keeps all completions",
			newObj("batch/v1", "Job").set(int64(2), "spec", "parallelism").set(int64(8), "spec", "completions").u(), 2,
			newObj("batch/v1", "Job").set(int64(2), "spec", "parallelism").set(int64(8), "spec", "completions").u()},
	}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, handled, err := n.ReviseReplica(ctx(), tt.obj, tt.replicas)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if diff := cmp.Diff(tt.want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, handled, _ := n.ReviseReplica(ctx(), newObj("apps/v1", "DaemonSet").u(), 1); handled {
		t.Error("DaemonSet revised")
	}
	if _, _, err := n.ReviseReplica(ctx(), deployment().set("x", "spec").u(), 1); err == nil {
		t.Error("revising a Deployment whose spec is a string did not fail")
	}
}

func TestRetain(t *testing.T) {
	service := func() *obj { return newObj("v1", "Service") }
	port := func(name string, p int64, nodePort int64) map[string]any {
		m := map[string]any{"name": name, "port": p, "protocol": "TCP"}
		if nodePort != 0 {
			m["nodePort"] = nodePort
		}
		return m
	}
	jobLabels := map[string]any{"app": "batch", "controller-uid": "member-uid", "batch.kubernetes.io/controller-uid": "member-uid",
		"job-name": "app", "batch.kubernetes.io/job-name": "app"}
	tests := []struct {
		name              string
		desired, observed *unstructured.Unstructured
		want              *unstructured.Unstructured
	}{{
		name:    "service keeps cluster IPs, health check port and node ports",
		desired: service().set("LoadBalancer", "spec", "type").set(list(port("http", 80, 0), port("https", 443, 0)), "spec", "ports").u(),
		observed: service().set("LoadBalancer", "spec", "type").set("10.0.0.7", "spec", "clusterIP").
			set(list("10.0.0.7"), "spec", "clusterIPs").set(int64(31000), "spec", "healthCheckNodePort").
			set(list(port("http", 80, 30080), port("https", 443, 30443)), "spec", "ports").u(),
		want: service().set("LoadBalancer", "spec", "type").set("10.0.0.7", "spec", "clusterIP").
			set(list("10.0.0.7"), "spec", "clusterIPs").set(int64(31000), "spec", "healthCheckNodePort").
			set(list(port("http", 80, 30080), port("https", 443, 30443)), "spec", "ports").u(),
	}, {
		name:     "ClusterIP service keeps its IP only",
		desired:  service().set(list(port("http", 80, 0)), "spec", "ports").u(),
		observed: service().set("10.0.0.8", "spec", "clusterIP").set(list(port("http", 80, 30080)), "spec", "ports").u(),
		want:     service().set("10.0.0.8", "spec", "clusterIP").set(list(port("http", 80, 0)), "spec", "ports").u(),
	}, {
		name:     "service account keeps the member's token secrets",
		desired:  newObj("v1", "ServiceAccount").set(list(map[string]any{"name": "mine"}), "secrets").u(),
		observed: newObj("v1", "ServiceAccount").set(list(map[string]any{"name": "app-token-x"}, map[string]any{"name": "mine"}), "secrets").u(),
		want:     newObj("v1", "ServiceAccount").set(list(map[string]any{"name": "mine"}, map[string]any{"name": "app-token-x"}), "secrets").u(),
	}, {
		name:     "claim keeps its volume and defaulted class",
		desired:  newObj("v1", "PersistentVolumeClaim").set("1Gi", "spec", "resources", "requests", "storage").u(),
		observed: newObj("v1", "PersistentVolumeClaim").set("pv-1", "spec", "volumeName").set("standard", "spec", "storageClassName").u(),
		want: newObj("v1", "PersistentVolumeClaim").set("1Gi", "spec", "resources", "requests", "storage").
			set("pv-1", "spec", "volumeName").set("standard", "spec", "storageClassName").u(),
	}, {
		name:     "volume keeps its claim",
		desired:  newObj("v1", "PersistentVolume").u(),
		observed: newObj("v1", "PersistentVolume").set(map[string]any{"name": "data", "namespace": "shop"}, "spec", "claimRef").u(),
		want:     newObj("v1", "PersistentVolume").set(map[string]any{"name": "data", "namespace": "shop"}, "spec", "claimRef").u(),
	}, {
		name: "job keeps the member's selector and controller labels",
		desired: newObj("batch/v1", "Job").set(map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "cp-uid"}}, "spec", "selector").
			set(map[string]any{"app": "batch", "controller-uid": "cp-uid", "batch.kubernetes.io/controller-uid": "cp-uid"}, "spec", "template", "metadata", "labels").u(),
		observed: newObj("batch/v1", "Job").set(map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "member-uid"}}, "spec", "selector").
			set(jobLabels, "spec", "template", "metadata", "labels").u(),
		want: newObj("batch/v1", "Job").set(map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "member-uid"}}, "spec", "selector").
			set(jobLabels, "spec", "template", "metadata", "labels").u(),
	}, {
		name: "pod keeps node, service account volumes, mounts and added tolerations",
		desired: newObj("v1", "Pod").set(list(map[string]any{"name": "c"}), "spec", "containers").
			set(list(map[string]any{"key": "a", "operator": "Exists"}), "spec", "tolerations").u(),
		observed: newObj("v1", "Pod").set("node-1", "spec", "nodeName").set("default", "spec", "serviceAccountName").
			set(list(map[string]any{"name": "kube-api-access"}), "spec", "volumes").
			set(list(map[string]any{"name": "c", "volumeMounts": list(map[string]any{"name": "kube-api-access", "mountPath": "/var/run"})}), "spec", "containers").
			set(list(map[string]any{"key": "a", "operator": "Exists"}, map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)}), "spec", "tolerations").u(),
		want: newObj("v1", "Pod").set("node-1", "spec", "nodeName").set("default", "spec", "serviceAccountName").
			set(list(map[string]any{"name": "kube-api-access"}), "spec", "volumes").
			set(list(map[string]any{"name": "c", "volumeMounts": list(map[string]any{"name": "kube-api-access", "mountPath": "/var/run"})}), "spec", "containers").
			set(list(map[string]any{"key": "a", "operator": "Exists"}, map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)}), "spec", "tolerations").u(),
	}, {
		name:     "deployment replicas kept when the template asks",
		desired:  deployment().set(map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}, "metadata", "labels").set(int64(2), "spec", "replicas").u(),
		observed: deployment().set(int64(7), "spec", "replicas").u(),
		want:     deployment().set(map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}, "metadata", "labels").set(int64(7), "spec", "replicas").u(),
	}, {
		name:     "statefulset replicas kept by annotation",
		desired:  newObj("apps/v1", "StatefulSet").set(map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}, "metadata", "annotations").set(int64(2), "spec", "replicas").u(),
		observed: newObj("apps/v1", "StatefulSet").set(int64(5), "spec", "replicas").u(),
		want:     newObj("apps/v1", "StatefulSet").set(map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}, "metadata", "annotations").set(int64(5), "spec", "replicas").u(),
	}, {
		name:     "deployment replicas follow the template otherwise",
		desired:  deployment().set(int64(2), "spec", "replicas").u(),
		observed: deployment().set(int64(7), "spec", "replicas").u(),
		want:     deployment().set(int64(2), "spec", "replicas").u(),
	}}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			observedBefore := runtime.DeepCopyJSON(tt.observed.Object)
			got, handled, err := n.Retain(ctx(), tt.desired, tt.observed)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if diff := cmp.Diff(tt.want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The result must not share anything with observed: changing
			// it leaves observed alone.
			scribble(got.Object)
			if diff := cmp.Diff(observedBefore, tt.observed.Object); diff != "" {
				t.Errorf("observed changed through the result (-before +after):\n%s", diff)
			}
		})
	}
}

// scribble changes every map and list reachable from v.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			scribble(e)
		}
		x["scribbled"] = true
	case []any:
		for _, e := range x {
			scribble(e)
		}
		if len(x) > 0 {
			x[0] = "scribbled"
		}
	}
}
