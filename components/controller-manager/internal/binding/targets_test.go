package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func clusters(nameReplicas ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(nameReplicas); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: nameReplicas[i].(string), Replicas: int32(nameReplicas[i+1].(int))})
	}
	return out
}

func dividedPlacement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}}
}

func duplicatedPlacement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated,
	}}
}

func TestTargetsFor(t *testing.T) {
	deployment := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 6}}`
	job := `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 6, completions: 10}}`
	workQueueJob := `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 6}}`
	tests := []struct {
		name          string
		spec          workv1alpha2.ResourceBindingSpec
		template      string
		reviseEnabled bool
		want          []target
	}{
		{
			name:          "not scheduled",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6},
			template:      deployment,
			reviseEnabled: true,
		},
		{
			name:          "divided: each cluster gets its share",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6, Placement: dividedPlacement(), Clusters: clusters("m1", 4, "m2", 2)},
			template:      deployment,
			reviseEnabled: true,
			want:          []target{{cluster: "m1", replicas: ptr.To[int64](4)}, {cluster: "m2", replicas: ptr.To[int64](2)}},
		},
		{
			name: "duplicated: the schedule wins over the template's count",
			spec: workv1alpha2.ResourceBindingSpec{Replicas: 3, Placement: duplicatedPlacement(), Clusters: clusters("m1", 3, "m2", 3)},
			// The template says 6; the binding was built when it said 3.
			template:      deployment,
			reviseEnabled: true,
			want:          []target{{cluster: "m1", replicas: ptr.To[int64](3)}, {cluster: "m2", replicas: ptr.To[int64](3)}},
		},
		{
			name:          "no rule to revise: the template's count passes",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6, Clusters: clusters("m1", 6)},
			template:      `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`,
			reviseEnabled: false,
			want:          []target{{cluster: "m1"}},
		},
		{
			name:          "no replicas (a ConfigMap): nothing revised",
			spec:          workv1alpha2.ResourceBindingSpec{Clusters: clusters("m1", 0, "m2", 0)},
			template:      `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
			reviseEnabled: true,
			want:          []target{{cluster: "m1"}, {cluster: "m2"}},
		},
		{
			name:          "divided job: completions split in proportion",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6, Placement: dividedPlacement(), Clusters: clusters("m1", 4, "m2", 2)},
			template:      job,
			reviseEnabled: true,
			want: []target{
				{cluster: "m1", replicas: ptr.To[int64](4), completions: ptr.To[int64](7)},
				{cluster: "m2", replicas: ptr.To[int64](2), completions: ptr.To[int64](3)},
			},
		},
		{
			name:          "duplicated job: every cluster runs all completions",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6, Placement: duplicatedPlacement(), Clusters: clusters("m1", 6, "m2", 6)},
			template:      job,
			reviseEnabled: true,
			want:          []target{{cluster: "m1", replicas: ptr.To[int64](6)}, {cluster: "m2", replicas: ptr.To[int64](6)}},
		},
		{
			name:          "work-queue job without completions: none set",
			spec:          workv1alpha2.ResourceBindingSpec{Replicas: 6, Placement: dividedPlacement(), Clusters: clusters("m1", 3, "m2", 3)},
			template:      workQueueJob,
			reviseEnabled: true,
			want:          []target{{cluster: "m1", replicas: ptr.To[int64](3)}, {cluster: "m2", replicas: ptr.To[int64](3)}},
		},
		{
			name: "required by other bindings: their clusters are added once",
			spec: workv1alpha2.ResourceBindingSpec{
				Clusters: clusters("m1", 0),
				RequiredBy: []workv1alpha2.BindingSnapshot{
					{Name: "a", Clusters: clusters("m1", 2, "m3", 2)},
					{Name: "b", Clusters: clusters("m3", 1, "m2", 1)},
				},
			},
			template:      `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
			reviseEnabled: true,
			want:          []target{{cluster: "m1"}, {cluster: "m3"}, {cluster: "m2"}},
		},
		{
			name: "suspended everywhere",
			spec: workv1alpha2.ResourceBindingSpec{
				Clusters:   clusters("m1", 0, "m2", 0),
				Suspension: &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
			},
			template: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
			want:     []target{{cluster: "m1", suspend: true}, {cluster: "m2", suspend: true}},
		},
		{
			name: "suspended on one cluster",
			spec: workv1alpha2.ResourceBindingSpec{
				Clusters: clusters("m1", 0, "m2", 0),
				Suspension: &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{
					Dispatching:           ptr.To(false),
					DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"m2"}},
				}},
			},
			template: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`,
			want:     []target{{cluster: "m1"}, {cluster: "m2", suspend: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := targetsFor(&tt.spec, obj(t, tt.template), tt.reviseEnabled)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(target{})); diff != "" {
				t.Errorf("targetsFor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDivideByWeight(t *testing.T) {
	tests := []struct {
		name     string
		total    int64
		clusters []workv1alpha2.TargetCluster
		want     map[string]int64
	}{
		{"exact", 6, clusters("a", 2, "b", 1), map[string]int64{"a": 4, "b": 2}},
		{"remainder to the largest fraction", 10, clusters("a", 4, "b", 2), map[string]int64{"a": 7, "b": 3}},
		{"equal fractions: more replicas first", 5, clusters("a", 1, "b", 1, "c", 2), map[string]int64{"a": 1, "b": 1, "c": 3}},
		{"equal weights: by name", 4, clusters("b", 1, "a", 1, "c", 1), map[string]int64{"a": 2, "b": 1, "c": 1}},
		{"fewer than clusters", 1, clusters("a", 1, "b", 1), map[string]int64{"a": 1, "b": 0}},
		{"zero-weight cluster gets none", 3, clusters("a", 0, "b", 2), map[string]int64{"a": 0, "b": 3}},
		{"no weights", 3, clusters("a", 0, "b", 0), map[string]int64{"a": 0, "b": 0}},
		{"nothing to divide", 0, clusters("a", 1), map[string]int64{"a": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := divideByWeight(tt.total, tt.clusters)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("divideByWeight (-want +got):\n%s", diff)
			}
			var sum, weights int64
			for _, c := range tt.clusters {
				sum += got[c.Name]
				weights += int64(c.Replicas)
			}
			if weights > 0 && sum != tt.total {
				t.Errorf("shares add up to %d, want %d", sum, tt.total)
			}
		})
	}
}

func TestConflictResolution(t *testing.T) {
	tests := []struct {
		annotation string
		binding    policyv1alpha1.ConflictResolution
		want       string
	}{
		{"", "", "abort"},
		{"", policyv1alpha1.ConflictAbort, "abort"},
		{"", policyv1alpha1.ConflictOverwrite, "overwrite"},
		{"overwrite", policyv1alpha1.ConflictAbort, "overwrite"},
		{"abort", policyv1alpha1.ConflictOverwrite, "abort"},
		{"bogus", policyv1alpha1.ConflictOverwrite, "overwrite"},
	}
	for _, tt := range tests {
		a := map[string]string{}
		if tt.annotation != "" {
			a["work.karmada.io/conflict-resolution"] = tt.annotation
		}
		if got := conflictResolution(a, tt.binding); got != tt.want {
			t.Errorf("conflictResolution(%q, %q) = %q, want %q", tt.annotation, tt.binding, got, tt.want)
		}
	}
}

func TestPreservedState(t *testing.T) {
	state := map[string]string{"failover.example/job-id": "abc"}
	task := func(purge policyv1alpha1.PurgeMode, before ...string) workv1alpha2.GracefulEvictionTask {
		return workv1alpha2.GracefulEvictionTask{FromCluster: "m1", PurgeMode: purge, Reason: "ApplicationFailure", Producer: "p",
			PreservedLabelState: state, ClustersBeforeFailover: before}
	}
	tests := []struct {
		name     string
		clusters []workv1alpha2.TargetCluster
		tasks    []workv1alpha2.GracefulEvictionTask
		cluster  string
		want     bool
	}{
		{"moved whole, purged directly", clusters("m2", 1), []workv1alpha2.GracefulEvictionTask{task(policyv1alpha1.PurgeModeDirectly, "m1")}, "m2", true},
		{"the cluster it ran on before", clusters("m1", 1), []workv1alpha2.GracefulEvictionTask{task(policyv1alpha1.PurgeModeDirectly, "m1")}, "m1", false},
		{"purged gracefully", clusters("m2", 1), []workv1alpha2.GracefulEvictionTask{task(policyv1alpha1.PurgeModeGracefully, "m1")}, "m2", false},
		{"spread over two clusters", append(clusters("m2", 1), clusters("m3", 1)...), []workv1alpha2.GracefulEvictionTask{task(policyv1alpha1.PurgeModeDirectly, "m1")}, "m2", false},
		{"no eviction", clusters("m2", 1), nil, "m2", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &workv1alpha2.ResourceBindingSpec{Clusters: tc.clusters, GracefulEvictionTasks: tc.tasks}
			if got := preservedState(spec, tc.cluster); (got != nil) != tc.want {
				t.Errorf("preservedState = %v, want state %v", got, tc.want)
			}
		})
	}
}
