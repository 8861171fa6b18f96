package descheduler

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func placement(t *testing.T, rs *policyv1alpha1.ReplicaSchedulingStrategy) string {
	t.Helper()
	b, err := json.Marshal(policyv1alpha1.Placement{ReplicaScheduling: rs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEligible(t *testing.T) {
	dynamic := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}
	static := dynamic.DeepCopy()
	static.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{{Weight: 1}}}
	aggregated := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
	duplicated := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
	deployment := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	now := metav1.Now()

	for _, tc := range []struct {
		name        string
		resource    workv1alpha2.ObjectReference
		annotations map[string]string
		deleting    bool
		want        bool
	}{
		{"dynamic weights", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, dynamic)}, false, true},
		{"static weights", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, static)}, false, false},
		{"aggregated", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, aggregated)}, false, false},
		{"duplicated", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, duplicated)}, false, false},
		{"never scheduled", deployment, nil, false, false},
		{"unreadable placement", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: "{"}, false, false},
		{"a StatefulSet", workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"}, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, dynamic)}, false, false},
		{"being deleted", deployment, map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placement(t, dynamic)}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: workv1alpha2.ResourceBindingSpec{Resource: tc.resource}}
			if tc.deleting {
				rb.DeletionTimestamp = &now
			}
			if got := Eligible(rb); got != tc.want {
				t.Errorf("Eligible = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTargets(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 3}, {Name: "b", Replicas: 2}, {Name: "c", Replicas: 1}, {Name: "d", Replicas: 4}}},
		Status: workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "a", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3,"replicas":3}`)}},
			{ClusterName: "b", Status: &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}}, // none ready: the field is left out
			{ClusterName: "c"},
			{ClusterName: "d", Status: &runtime.RawExtension{Raw: []byte(`not json`)}},
		}},
	}
	got := Targets(rb)
	want := []Target{{Name: "a", Spec: 3, Ready: 3}, {Name: "b", Spec: 2, Ready: readyUnknown}, {Name: "c", Spec: 1, Ready: readyUnknown}, {Name: "d", Spec: 4, Ready: readyUnknown}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, Lagging(got)); diff != "" {
		t.Errorf("Lagging (-want +got):\n%s", diff)
	}
}

func TestPlan(t *testing.T) {
	clusters := func(replicas ...int32) []workv1alpha2.TargetCluster {
		out := make([]workv1alpha2.TargetCluster, len(replicas))
		for i, r := range replicas {
			out[i] = workv1alpha2.TargetCluster{Name: string(rune('a' + i)), Replicas: r}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		targets  []Target
		want     []workv1alpha2.TargetCluster
		moved    int32
		message  string
		original []workv1alpha2.TargetCluster
	}{
		{
			name:     "unschedulable replicas leave",
			original: clusters(4, 2),
			targets:  []Target{{Name: "a", Spec: 4, Ready: 1, Unschedulable: 3}, {Name: "b", Spec: 2, Ready: 2}},
			want:     clusters(1, 2), moved: 3,
			message: "Binding has been descheduled, 3 total descheduled replica(s): 3 replica(s) in cluster(a)",
		},
		{
			name:     "never below the ready replicas",
			original: clusters(5),
			targets:  []Target{{Name: "a", Spec: 5, Ready: 3, Unschedulable: 4}},
			want:     clusters(3), moved: 2,
			message: "Binding has been descheduled, 2 total descheduled replica(s): 2 replica(s) in cluster(a)",
		},
		{
			name:     "ready unknown: all unschedulable go",
			original: clusters(3, 3),
			targets:  []Target{{Name: "a", Spec: 3, Ready: readyUnknown, Unschedulable: 3}, {Name: "b", Spec: 3, Ready: readyUnknown, Unschedulable: 1}},
			want:     clusters(0, 2), moved: 4,
			message: "Binding has been descheduled, 4 total descheduled replica(s): 3 replica(s) in cluster(a), 1 replica(s) in cluster(b)",
		},
		{
			name:     "more unschedulable than scheduled is not believed",
			original: clusters(2),
			targets:  []Target{{Name: "a", Spec: 2, Ready: 0, Unschedulable: 5}},
		},
		{
			name:     "nothing unschedulable",
			original: clusters(2, 1),
			targets:  []Target{{Name: "a", Spec: 2, Ready: 0}, {Name: "b", Spec: 1, Ready: 1}},
		},
		{
			name:     "all unschedulable ones are ready by now",
			original: clusters(2),
			targets:  []Target{{Name: "a", Spec: 2, Ready: 2, Unschedulable: 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]workv1alpha2.TargetCluster(nil), tc.original...)
			got, moved, message := Plan(tc.original, tc.targets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if moved != tc.moved || message != tc.message {
				t.Errorf("moved %d %q, want %d %q", moved, message, tc.moved, tc.message)
			}
			if diff := cmp.Diff(before, tc.original); diff != "" {
				t.Errorf("Plan changed its input:\n%s", diff)
			}
		})
	}
}
