package federatedquota_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// scheduled is a binding asking cpu per replica with replicas in each of
// the listed clusters.
func scheduled(cpu string, replicas ...int32) workv1alpha2.ResourceBinding {
	rb := workv1alpha2.ResourceBinding{Spec: workv1alpha2.ResourceBindingSpec{
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
	}}
	for i, r := range replicas {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: []string{"member1", "member2", "member3"}[i], Replicas: r})
	}
	return rb
}

// canonical renders quantities as strings, so that 1000m and 1 compare equal.
func canonical(l corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for k, q := range l {
		out[k] = q.String()
	}
	return out
}

func TestBindingUsage(t *testing.T) {
	components := workv1alpha2.ResourceBinding{Spec: workv1alpha2.ResourceBindingSpec{
		Components: []workv1alpha2.Component{
			{Name: "driver", ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			{Name: "executor", ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		},
		Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Components: []workv1alpha2.ComponentReplicas{{Name: "driver", Replicas: 1}, {Name: "executor", Replicas: 3}}}},
	}}
	tests := []struct {
		name string
		rb   workv1alpha2.ResourceBinding
		want map[corev1.ResourceName]string
	}{
		{name: "unscheduled", rb: scheduled("500m"), want: map[corev1.ResourceName]string{}},
		{name: "replicas over clusters", rb: scheduled("500m", 2, 1), want: map[corev1.ResourceName]string{corev1.ResourceCPU: "1500m"}},
		{name: "no requirements", rb: workv1alpha2.ResourceBinding{Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}}}},
			want: map[corev1.ResourceName]string{}},
		{name: "components", rb: components, want: map[corev1.ResourceName]string{corev1.ResourceCPU: "1", corev1.ResourceMemory: "3Gi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, canonical(federatedquota.BindingUsage(&tc.rb.Spec))); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsed(t *testing.T) {
	bindings := []workv1alpha2.ResourceBinding{scheduled("1", 1, 1, 1), scheduled("500m", 2), scheduled("2")}
	tests := []struct {
		name    string
		overall corev1.ResourceList
		want    map[corev1.ResourceName]string
	}{
		{name: "cpu", overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}, want: map[corev1.ResourceName]string{corev1.ResourceCPU: "4"}},
		{name: "requests.cpu counts cpu requests", overall: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("8")},
			want: map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "4"}},
		{name: "a limit nothing requests is left out", overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			want: map[corev1.ResourceName]string{corev1.ResourceCPU: "4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, canonical(federatedquota.Used(bindings, tc.overall))); diff != "" {
				t.Errorf("used (-want +got):\n%s", diff)
			}
		})
	}
}
