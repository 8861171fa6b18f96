package native

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestReflectStatus(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want map[string]any // nil: no status
	}{{
		name: "deployment counters and generations",
		obj: deployment().set(int64(5), "metadata", "generation").
			set(map[string]any{"resourcetemplate.karmada.io/generation": "3"}, "metadata", "annotations").
			set(map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "updatedReplicas": int64(2), "availableReplicas": int64(1),
				"observedGeneration": int64(5), "conditions": list(map[string]any{"type": "Available"})}, "status").u(),
		want: map[string]any{"replicas": 2.0, "readyReplicas": 2.0, "updatedReplicas": 2.0, "availableReplicas": 1.0,
			"observedGeneration": 5.0, "generation": 5.0, "resourceTemplateGeneration": 3.0},
	}, {
		name: "service load balancer only",
		obj: newObj("v1", "Service").set(map[string]any{"loadBalancer": map[string]any{"ingress": list(map[string]any{"ip": "1.2.3.4"})},
			"conditions": list()}, "status").u(),
		want: map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "1.2.3.4"}}}},
	}, {
		name: "job",
		obj: newObj("batch/v1", "Job").set(map[string]any{"active": int64(1), "succeeded": int64(2), "uncountedTerminatedPods": map[string]any{},
			"startTime": "2025-01-01T00:00:00Z"}, "status").u(),
		want: map[string]any{"active": 1.0, "succeeded": 2.0, "startTime": "2025-01-01T00:00:00Z"},
	}, {
		name: "other kinds reflect their whole status",
		obj:  newObj("example.com/v1", "Widget").set(map[string]any{"phase": "Ready", "n": int64(1)}, "status").u(),
		want: map[string]any{"phase": "Ready", "n": 1.0},
	}, {
		name: "no status",
		obj:  deployment().u(),
	}}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, handled, err := n.ReflectStatus(ctx(), tt.obj)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			var got map[string]any
			if raw != nil {
				if err := json.Unmarshal(raw.Raw, &got); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateStatus(t *testing.T) {
	deploy := func(generation int64, old map[string]any) *obj {
		o := deployment().set(generation, "metadata", "generation")
		if old != nil {
			o.set(old, "status")
		}
		return o
	}
	member := func(replicas, ready, updated, available, gen, observed, tplGen int64) map[string]any {
		return map[string]any{"replicas": replicas, "readyReplicas": ready, "updatedReplicas": updated, "availableReplicas": available,
			"generation": gen, "observedGeneration": observed, "resourceTemplateGeneration": tplGen}
	}
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		items []workv1alpha2.AggregatedStatusItem
		want  map[string]any
	}{{
		name: "deployment sums and observes the generation when all members caught up",
		obj:  deploy(3, map[string]any{"conditions": list(map[string]any{"type": "Available"})}).u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("member1", member(2, 2, 2, 2, 7, 7, 3)),
			status("member2", member(3, 1, 3, 1, 4, 4, 3)),
		},
		want: map[string]any{"replicas": int64(5), "readyReplicas": int64(3), "updatedReplicas": int64(5), "availableReplicas": int64(3),
			"unavailableReplicas": int64(0), "observedGeneration": int64(3), "conditions": list(map[string]any{"type": "Available"})},
	}, {
		name: "deployment keeps the old observedGeneration while a member lags",
		obj:  deploy(4, map[string]any{"observedGeneration": int64(3)}).u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("member1", member(2, 2, 2, 2, 7, 7, 4)),
			status("member2", member(2, 2, 2, 2, 5, 5, 3)),
		},
		want: map[string]any{"replicas": int64(4), "readyReplicas": int64(4), "updatedReplicas": int64(4), "availableReplicas": int64(4),
			"unavailableReplicas": int64(0), "observedGeneration": int64(3)},
	}, {
		name:  "deployment with a member without status yet",
		obj:   deploy(2, nil).u(),
		items: []workv1alpha2.AggregatedStatusItem{status("member1", member(1, 1, 1, 1, 1, 1, 2)), {ClusterName: "member2"}},
		want: map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1),
			"unavailableReplicas": int64(0)},
	}, {
		name: "daemonset sums",
		obj:  newObj("apps/v1", "DaemonSet").set(int64(1), "metadata", "generation").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"desiredNumberScheduled": int64(3), "numberReady": int64(3), "generation": int64(1), "observedGeneration": int64(1)}),
			status("b", map[string]any{"desiredNumberScheduled": int64(2), "numberReady": int64(1), "generation": int64(1), "observedGeneration": int64(1)}),
		},
		want: map[string]any{"currentNumberScheduled": int64(0), "desiredNumberScheduled": int64(5), "numberAvailable": int64(0),
			"numberMisscheduled": int64(0), "numberReady": int64(4), "updatedNumberScheduled": int64(0), "numberUnavailable": int64(0),
			"observedGeneration": int64(1)},
	}, {
		name: "job: counts, failed anywhere, earliest start",
		obj:  newObj("batch/v1", "Job").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"succeeded": int64(2), "startTime": "2025-01-01T00:00:10Z", "completionTime": "2025-01-01T00:05:00Z",
				"conditions": list(map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2025-01-01T00:05:00Z"})}),
			status("b", map[string]any{"failed": int64(1), "active": int64(1), "startTime": "2025-01-01T00:00:05Z",
				"conditions": list(map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": "2025-01-01T00:06:00Z"})}),
		},
		want: map[string]any{"succeeded": int64(2), "failed": int64(1), "startTime": "2025-01-01T00:00:05Z",
			"conditions": []any{map[string]any{"type": "FailureTarget", "status": "True", "reason": "JobFailed",
				"message": "Job failed in member clusters b", "lastProbeTime": "2025-01-01T00:06:00Z", "lastTransitionTime": "2025-01-01T00:06:00Z"},
				map[string]any{"type": "Failed", "status": "True", "reason": "JobFailed",
					"message": "Job executed failed in member clusters b", "lastProbeTime": "2025-01-01T00:06:00Z", "lastTransitionTime": "2025-01-01T00:06:00Z"}}},
	}, {
		name: "job: running anywhere, no completion time",
		obj:  newObj("batch/v1", "Job").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"succeeded": int64(2), "startTime": "2025-01-01T00:00:10Z", "completionTime": "2025-01-01T00:05:00Z",
				"conditions": list(map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2025-01-01T00:05:00Z"})}),
			status("b", map[string]any{"active": int64(2), "ready": int64(1), "startTime": "2025-01-01T00:00:05Z"}),
		},
		want: map[string]any{"active": int64(2), "ready": int64(1), "succeeded": int64(2), "startTime": "2025-01-01T00:00:05Z"},
	}, {
		name: "job: complete when complete everywhere",
		obj:  newObj("batch/v1", "Job").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"succeeded": int64(1), "completionTime": "2025-01-01T00:05:00Z",
				"conditions": list(map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2025-01-01T00:05:00Z"})}),
			status("b", map[string]any{"succeeded": int64(1), "completionTime": "2025-01-01T00:07:00Z",
				"conditions": list(map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2025-01-01T00:07:00Z"})}),
		},
		want: map[string]any{"succeeded": int64(2), "startTime": "2025-01-01T00:07:00Z", "completionTime": "2025-01-01T00:07:00Z",
			"conditions": []any{map[string]any{"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
				"message": "Reached expected number of succeeded pods in every member cluster", "lastProbeTime": "2025-01-01T00:07:00Z", "lastTransitionTime": "2025-01-01T00:07:00Z"},
				map[string]any{"type": "Complete", "status": "True", "reason": "Completed",
					"message": "Job completed", "lastProbeTime": "2025-01-01T00:07:00Z", "lastTransitionTime": "2025-01-01T00:07:00Z"}}},
	}, {
		name: "load balancer service appends, de-duplicates and sorts ingress, hostnames as the members wrote them",
		obj:  newObj("v1", "Service").set("LoadBalancer", "spec", "type").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"loadBalancer": map[string]any{"ingress": list(map[string]any{"ip": "2.2.2.2"}, map[string]any{"ip": "1.1.1.1"})}}),
			status("b", map[string]any{"loadBalancer": map[string]any{"ingress": list(map[string]any{"hostname": "lb.example.com"}, map[string]any{"ip": "1.1.1.1"})}}),
		},
		want: map[string]any{"loadBalancer": map[string]any{"ingress": []any{
			map[string]any{"hostname": "lb.example.com"}, map[string]any{"ip": "1.1.1.1"}, map[string]any{"ip": "2.2.2.2"}}}},
	}, {
		name: "pod takes the worst phase",
		obj:  newObj("v1", "Pod").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"phase": "Running"}), {ClusterName: "b"},
		},
		want: map[string]any{"phase": "Pending"},
	}, {
		name:  "claim lost anywhere is lost",
		obj:   newObj("v1", "PersistentVolumeClaim").u(),
		items: []workv1alpha2.AggregatedStatusItem{status("a", map[string]any{"phase": "Bound"}), status("b", map[string]any{"phase": "Lost"})},
		want:  map[string]any{"phase": "Lost"},
	}, {
		name:  "volume pending while a member has no status",
		obj:   newObj("v1", "PersistentVolume").u(),
		items: []workv1alpha2.AggregatedStatusItem{status("a", map[string]any{"phase": "Bound"}), {ClusterName: "b"}},
		want:  map[string]any{"phase": "Pending"},
	}, {
		name: "pod disruption budget sums, disrupted pods by cluster",
		obj:  newObj("policy/v1", "PodDisruptionBudget").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"currentHealthy": int64(2), "desiredHealthy": int64(2), "expectedPods": int64(3), "disruptionsAllowed": int64(0),
				"disruptedPods": map[string]any{"p1": "2025-01-01T00:00:00Z"}}),
			status("b", map[string]any{"currentHealthy": int64(1), "desiredHealthy": int64(1), "expectedPods": int64(1), "disruptionsAllowed": int64(1)}),
		},
		want: map[string]any{"currentHealthy": int64(3), "desiredHealthy": int64(3), "expectedPods": int64(4), "disruptionsAllowed": int64(1),
			"disruptedPods": map[string]any{"a/p1": "2025-01-01T00:00:00Z"}},
	}, {
		name: "hpa sums replicas",
		obj:  newObj("autoscaling/v2", "HorizontalPodAutoscaler").set(map[string]any{"conditions": []any{}}, "status").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"currentReplicas": int64(2), "desiredReplicas": int64(3), "lastScaleTime": "2025-01-01T00:00:00Z"}),
			status("b", map[string]any{"currentReplicas": int64(1), "desiredReplicas": int64(1), "lastScaleTime": "2025-01-02T00:00:00Z"}),
		},
		want: map[string]any{"currentReplicas": int64(3), "desiredReplicas": int64(4), "lastScaleTime": "2025-01-02T00:00:00Z", "conditions": []any{}},
	}, {
		name: "cronjob lists active jobs of all members",
		obj:  newObj("batch/v1", "CronJob").u(),
		items: []workv1alpha2.AggregatedStatusItem{
			status("a", map[string]any{"active": list(map[string]any{"name": "j1"}), "lastScheduleTime": "2025-01-01T00:00:00Z"}),
			status("b", map[string]any{"active": list(map[string]any{"name": "j2"}), "lastScheduleTime": "2025-01-01T01:00:00Z"}),
		},
		want: map[string]any{"active": []any{map[string]any{"name": "j1"}, map[string]any{"name": "j2"}}, "lastScheduleTime": "2025-01-01T01:00:00Z"},
	}}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, handled, err := n.AggregateStatus(ctx(), tt.obj, tt.items)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if diff := cmp.Diff(tt.want, got.Object["status"]); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
	bad := []workv1alpha2.AggregatedStatusItem{status("a", map[string]any{"replicas": "many"})}
	if _, _, err := n.AggregateStatus(ctx(), deployment().u(), bad); err == nil {
		t.Error("a status with replicas \"many\" was aggregated")
	}
}

func TestInterpretHealth(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"deployment rolled out", deployment().set(int64(2), "metadata", "generation").set(int64(3), "spec", "replicas").
			set(map[string]any{"observedGeneration": int64(2), "updatedReplicas": int64(3), "availableReplicas": int64(3)}, "status").u(), true},
		{"deployment not observed", deployment().set(int64(3), "metadata", "generation").set(int64(3), "spec", "replicas").
			set(map[string]any{"observedGeneration": int64(2), "updatedReplicas": int64(3), "availableReplicas": int64(3)}, "status").u(), false},
		{"deployment updating", deployment().set(int64(1), "metadata", "generation").set(int64(3), "spec", "replicas").
			set(map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(2), "availableReplicas": int64(3)}, "status").u(), false},
		{"deployment unavailable", deployment().set(int64(1), "metadata", "generation").set(int64(3), "spec", "replicas").
			set(map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(3), "availableReplicas": int64(2)}, "status").u(), false},
		{"statefulset partitioned update done", newObj("apps/v1", "StatefulSet").set(int64(1), "metadata", "generation").
			set(int64(4), "spec", "replicas").set(int64(2), "spec", "updateStrategy", "rollingUpdate", "partition").
			set(map[string]any{"observedGeneration": int64(1), "updatedReplicas": int64(2), "availableReplicas": int64(4)}, "status").u(), true},
		{"replicaset short", newObj("apps/v1", "ReplicaSet").set(int64(2), "spec", "replicas").
			set(map[string]any{"availableReplicas": int64(1)}, "status").u(), false},
		{"daemonset ready", newObj("apps/v1", "DaemonSet").
			set(map[string]any{"desiredNumberScheduled": int64(3), "updatedNumberScheduled": int64(3), "numberAvailable": int64(3)}, "status").u(), true},
		{"job failed", newObj("batch/v1", "Job").set(map[string]any{"conditions": list(map[string]any{"type": "Failed", "status": "True"})}, "status").u(), false},
		{"job running", newObj("batch/v1", "Job").set(map[string]any{"active": int64(1)}, "status").u(), true},
		{"cronjob", newObj("batch/v1", "CronJob").u(), true},
		{"pod running and ready", newObj("v1", "Pod").set(map[string]any{"phase": "Running",
			"conditions": list(map[string]any{"type": "Ready", "status": "True"})}, "status").u(), true},
		{"pod running not ready", newObj("v1", "Pod").set(map[string]any{"phase": "Running",
			"conditions": list(map[string]any{"type": "Ready", "status": "False"})}, "status").u(), false},
		{"pod succeeded", newObj("v1", "Pod").set(map[string]any{"phase": "Succeeded"}, "status").u(), true},
		{"cluster IP service", newObj("v1", "Service").u(), true},
		{"load balancer without address", newObj("v1", "Service").set("LoadBalancer", "spec", "type").u(), false},
		{"load balancer with address", newObj("v1", "Service").set("LoadBalancer", "spec", "type").
			set(list(map[string]any{"ip": "1.2.3.4"}), "status", "loadBalancer", "ingress").u(), true},
		{"ingress without address", newObj("networking.k8s.io/v1", "Ingress").u(), false},
		{"claim bound", newObj("v1", "PersistentVolumeClaim").set("Bound", "status", "phase").u(), true},
		{"claim pending", newObj("v1", "PersistentVolumeClaim").set("Pending", "status", "phase").u(), false},
		{"volume available", newObj("v1", "PersistentVolume").set("Available", "status", "phase").u(), true},
		{"pdb short", newObj("policy/v1", "PodDisruptionBudget").
			set(map[string]any{"currentHealthy": int64(1), "desiredHealthy": int64(2)}, "status").u(), false},
		{"hpa cannot get metrics", newObj("autoscaling/v2", "HorizontalPodAutoscaler").
			set(list(map[string]any{"type": "ScalingActive", "status": "False"}), "status", "conditions").u(), false},
		{"hpa fine", newObj("autoscaling/v2", "HorizontalPodAutoscaler").
			set(list(map[string]any{"type": "AbleToScale", "status": "True"}), "status", "conditions").u(), true},
	}
	n := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, handled, err := n.InterpretHealth(ctx(), tt.obj)
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if got != tt.want {
				t.Errorf("healthy = %v, want %v", got, tt.want)
			}
		})
	}
	if _, _, err := n.InterpretHealth(ctx(), deployment().set("x", "status", "updatedReplicas").u()); err == nil {
		t.Error("updatedReplicas \"x\" was judged")
	}
}
