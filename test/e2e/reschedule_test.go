package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// rescheduleLabel is this scenario's own label on the shared members, so
// that no other scenario's placement selects by it.
const rescheduleLabel = "e2e-reschedule.flotilla.io/pool"

// labelMember sets (value non-empty) or removes this scenario's label on a
// member's Cluster.
func labelMember(t *testing.T, name, value string) {
	t.Helper()
	update(t, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(c *clusterv1alpha1.Cluster) {
		if value == "" {
			delete(c.Labels, rescheduleLabel)
			return
		}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[rescheduleLabel] = value
	})
}

// TestRescheduleOnClusterChange is issue 17's first point as a Karmada
// user meets it: a Duplicated Deployment placed by a cluster label
// selector leaves a member whose labels stop matching and comes back when
// they match again; with no member matching it is on none.
func TestRescheduleOnClusterChange(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-reschedule")
	for _, m := range []string{"member1", "member2"} {
		labelMember(t, m, "web")
	}
	t.Cleanup(func() {
		// t.Context is over by now.
		ctx := context.Background()
		for _, m := range []string{"member1", "member2"} {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				c := &clusterv1alpha1.Cluster{}
				if err := cp.Get(ctx, client.ObjectKey{Name: m}, c); err != nil {
					return err
				}
				if _, ok := c.Labels[rescheduleLabel]; !ok {
					return nil
				}
				delete(c.Labels, rescheduleLabel)
				return cp.Update(ctx, c)
			})
			if err != nil {
				t.Errorf("removing %s from %s: %v", rescheduleLabel, m, err)
			}
		}
	})

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{rescheduleLabel: "web"}},
				},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated},
			},
		},
	})
	create(t, dep)

	key := client.ObjectKeyFromObject(dep)
	newDeployment := func() *appsv1.Deployment { return &appsv1.Deployment{} }
	duplicated := func(d *appsv1.Deployment) bool { return d.Spec.Replicas != nil && *d.Spec.Replicas == 2 }
	inMembers(t, []string{"member1", "member2"}, key, newDeployment, "web", duplicated)
	absentFrom(t, []string{"member3"}, key, newDeployment())

	// member2 stops matching: the Deployment leaves it, member1 keeps it.
	labelMember(t, "member2", "elsewhere")
	goneFrom(t, []string{"member2"}, key, newDeployment())
	inMembers(t, []string{"member1"}, key, newDeployment, "web", duplicated)

	// The label set back: it returns.
	labelMember(t, "member2", "web")
	inMembers(t, []string{"member1", "member2"}, key, newDeployment, "web", duplicated)

	// No member matches: it is on none, as in Karmada; then on both again.
	labelMember(t, "member1", "")
	labelMember(t, "member2", "")
	goneFrom(t, []string{"member1", "member2"}, key, newDeployment())
	labelMember(t, "member1", "web")
	labelMember(t, "member2", "web")
	inMembers(t, []string{"member1", "member2"}, key, newDeployment, "web", duplicated)
	absentFrom(t, []string{"member3"}, key, newDeployment())
}
