package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// TestWorkloadAntiAffinitySpreadsDeployments: two Deployments labelled
// with one anti-affinity group, under a policy that puts each on one
// member (spread by cluster, at most one) and keeps its anti-affinity
// group apart, run in two different members, and nowhere else. Without
// the WorkloadAntiAffinity plugin both would take the same best-ranked
// member.
func TestWorkloadAntiAffinitySpreadsDeployments(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-workload-anti-affinity")
	policy := propagationPolicy(ns, "ha", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"})
	policy.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{
		{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1},
	}
	policy.Spec.Placement.WorkloadAffinity = &policyv1alpha1.WorkloadAffinity{
		AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "ha.example.io/group"},
	}
	create(t, policy)

	where := map[string]string{}
	for _, name := range []string{"db-a", "db-b"} {
		d := deployment(ns, name, 1, "registry.example/db:1")
		d.Labels = map[string]string{"ha.example.io/group": "db"}
		create(t, d)
	}
	for _, name := range []string{"db-a", "db-b"} {
		key := client.ObjectKey{Namespace: ns, Name: names.Binding(name, "Deployment")}
		eventually(t, name+" scheduled to one member", func(ctx context.Context) (bool, error) {
			var rb workv1alpha2.ResourceBinding
			if err := cp.Get(ctx, key, &rb); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if g := rb.Spec.WorkloadAffinityGroups; g == nil || g.AntiAffinityGroup != "db" {
				return false, fmt.Errorf("workloadAffinityGroups %+v", g)
			}
			if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) != 1 {
				return false, fmt.Errorf("clusters %v, conditions %+v", rb.Spec.Clusters, rb.Status.Conditions)
			}
			where[name] = rb.Spec.Clusters[0].Name
			return true, nil
		})
	}
	if where["db-a"] == where["db-b"] {
		t.Fatalf("both Deployments of one anti-affinity group scheduled to %s", where["db-a"])
	}
	for name, m := range where {
		key := client.ObjectKey{Namespace: ns, Name: name}
		inMembers(t, []string{m}, key, newDeployment, name+" Available", func(d *appsv1.Deployment) bool {
			return d.Status.AvailableReplicas == 1
		})
		var others []string
		for _, o := range allMembers() {
			if o != m {
				others = append(others, o)
			}
		}
		absentFrom(t, others, key, &appsv1.Deployment{})
	}
}
