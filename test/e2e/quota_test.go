package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// evenlyDivided places a Deployment's replicas over every member with
// equal static weights.
func evenlyDivided(p *policyv1alpha1.PropagationPolicy) *policyv1alpha1.PropagationPolicy {
	weights := make([]policyv1alpha1.StaticClusterWeight, 0, len(allMembers()))
	for _, m := range allMembers() {
		weights = append(weights, policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{m}}, Weight: 1})
	}
	p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{StaticWeightList: weights},
	}
	return p
}

// requesting is a Deployment whose pods request cpu each.
func requesting(ns, name string, replicas int32, cpu string) *appsv1.Deployment {
	d := deployment(ns, name, replicas, "registry.example/"+name+":1")
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return d
}

// quotaStatus reads a FederatedResourceQuota's overall and overallUsed cpu
// and the clusters of its aggregated status.
func quotaStatus(ctx context.Context, key client.ObjectKey) (overall, used string, clusters []string, err error) {
	var q policyv1alpha1.FederatedResourceQuota
	if err := cp.Get(ctx, key, &q); err != nil {
		return "", "", nil, err
	}
	if o, ok := q.Status.Overall[corev1.ResourceCPU]; ok {
		overall = o.String()
	}
	if u, ok := q.Status.OverallUsed[corev1.ResourceCPU]; ok {
		used = u.String()
	}
	for _, a := range q.Status.AggregatedStatus {
		clusters = append(clusters, a.ClusterName)
	}
	return overall, used, clusters, nil
}

func waitForQuota(t *testing.T, key client.ObjectKey, overall, used string) {
	t.Helper()
	eventually(t, fmt.Sprintf("quota %s at %s of %s cpu", key.Name, used, overall), func(ctx context.Context) (bool, error) {
		o, u, _, err := quotaStatus(ctx, key)
		return o == overall && u == used, err
	})
}

// TestFederatedResourceQuota: a quota of 4 CPU over the three members
// (with static shares written into two of them as ResourceQuotas) counts
// the replicas scheduled in its namespace; a Deployment that would take the
// namespace over 4 CPU is refused by the webhook when the scheduler places
// it, stays unplaced with Scheduled False, reason QuotaExceeded, and is
// placed once the quota grows.
func TestFederatedResourceQuota(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-quota")
	q := &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{
				{ClusterName: "member1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
				{ClusterName: "member2", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
			},
		},
	}
	create(t, q)
	qKey := client.ObjectKeyFromObject(q)
	waitForQuota(t, qKey, "4", "")

	// The static shares are the members' own ResourceQuotas, and their
	// status comes back.
	rqKey := client.ObjectKey{Namespace: ns, Name: "team"}
	inMembers(t, []string{"member1", "member2"}, rqKey, func() *corev1.ResourceQuota { return &corev1.ResourceQuota{} },
		"ResourceQuota team of 2 cpu", func(rq *corev1.ResourceQuota) bool {
			hard := rq.Spec.Hard[corev1.ResourceCPU]
			return hard.String() == "2"
		})
	absentFrom(t, []string{"member3"}, rqKey, &corev1.ResourceQuota{})
	eventually(t, "the members' quota status aggregated", func(ctx context.Context) (bool, error) {
		_, _, clusters, err := quotaStatus(ctx, qKey)
		return fmt.Sprint(clusters) == "[member1 member2]", err
	})

	create(t, evenlyDivided(propagationPolicy(ns, "apps", nil,
		policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"})))
	web := requesting(ns, "web", 3, "500m")
	create(t, web)
	webKey := client.ObjectKey{Namespace: ns, Name: names.Binding("web", "Deployment")}
	eventually(t, "web placed", func(ctx context.Context) (bool, error) {
		got, err := placement(ctx, webKey)
		return len(got) == 3, err
	})
	waitForQuota(t, qKey, "4", "1500m")

	// 6 × 500m more would make 4500m: refused.
	big := requesting(ns, "big", 6, "500m")
	create(t, big)
	bigKey := client.ObjectKey{Namespace: ns, Name: names.Binding("big", "Deployment")}
	eventually(t, "big refused as over quota", func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, bigKey, &rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == workv1alpha2.BindingReasonQuotaExceeded && len(rb.Spec.Clusters) == 0, nil
	})
	eventually(t, "a ScheduleBindingFailed event on big's binding", func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": bigKey.Name, "reason": events.ReasonScheduleBindingFailed})
		if err := cp.List(ctx, &list, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: sel}); err != nil {
			return false, err
		}
		return len(list.Items) > 0, nil
	})
	absentFrom(t, allMembers(), client.ObjectKeyFromObject(big), &appsv1.Deployment{})
	waitForQuota(t, qKey, "4", "1500m")

	// The quota grows: big is placed and runs.
	update(t, q, func(q *policyv1alpha1.FederatedResourceQuota) {
		q.Spec.Overall[corev1.ResourceCPU] = resource.MustParse("6")
	})
	eventually(t, "big placed once the quota has room", func(ctx context.Context) (bool, error) {
		got, err := placement(ctx, bigKey)
		return len(got) == 3, err
	})
	waitForQuota(t, qKey, "6", "4500m")
	inMembers(t, allMembers(), client.ObjectKeyFromObject(big), newDeployment, "big", func(*appsv1.Deployment) bool { return true })

	// A Deployment deleted gives its share back.
	remove(t, web)
	waitForQuota(t, qKey, "6", "3")

	// The quota deleted, its members' ResourceQuotas go.
	remove(t, q)
	goneFrom(t, []string{"member1", "member2"}, rqKey, &corev1.ResourceQuota{})
}

// TestHPAReplicasSync: a Deployment divided 1:1:1 over the members and an
// HPA propagated to each member with minReplicas 2: every member's HPA
// scales its copy to 2 (the members' kube-controller-manager does, with
// no metrics needed below minReplicas). The hpaScaleTargetMarker labels
// the template retain-replicas, so the members keep the replicas their
// HPAs chose, and the deploymentReplicasSyncer sets the template's
// replicas to the members' total, 6.
func TestHPAReplicasSync(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-hpa-sync")
	create(t, evenlyDivided(propagationPolicy(ns, "web", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})))
	create(t, propagationPolicy(ns, "hpa", nil, policyv1alpha1.ResourceSelector{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}))
	d := requesting(ns, "web", 3, "100m")
	create(t, d)
	create(t, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    4,
		},
	})
	key := client.ObjectKeyFromObject(d)
	eventually(t, "the template labelled retain-replicas", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		err := cp.Get(ctx, key, &got)
		return err == nil && got.Labels[workv1alpha1.RetainReplicasLabel] == workv1alpha1.RetainReplicasValue, err
	})
	inMembers(t, allMembers(), key, newDeployment, "web scaled to 2 by the member's HPA", func(got *appsv1.Deployment) bool {
		return *got.Spec.Replicas == 2
	})
	eventually(t, "the template's replicas follow the members' total", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		err := cp.Get(ctx, key, &got)
		return err == nil && *got.Spec.Replicas == 6 && got.Status.Replicas == 6, err
	})
	// Settled: the members keep what their HPAs chose.
	staysSo(t, "the members keep 2 replicas each", func(ctx context.Context) (bool, error) {
		for _, m := range allMembers() {
			var got appsv1.Deployment
			if err := member(t, m).Client.Get(ctx, key, &got); err != nil {
				return false, err
			}
			if *got.Spec.Replicas != 2 {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestCronFederatedHPAScalesAtItsMinute: a CronFederatedHPA whose rule
// runs every minute scales a propagated Deployment's template from 1 to 3
// replicas through its scale subresource when the minute comes; the
// members follow and the rule's success is in its execution history.
func TestCronFederatedHPAScalesAtItsMinute(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-cronfhpa")
	create(t, propagationPolicy(ns, "web", []string{"member1"}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}))
	d := deployment(ns, "web", 1, "registry.example/web:1")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	inMembers(t, []string{"member1"}, key, newDeployment, "web with 1 replica", func(got *appsv1.Deployment) bool { return *got.Spec.Replicas == 1 })

	cron := &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Rules: []autoscalingv1alpha1.CronFederatedHPARule{{
				Name: "scale-up", Schedule: "* * * * *", TargetReplicas: ptr.To[int32](3), TimeZone: ptr.To("Europe/Paris"),
			}},
		},
	}
	create(t, cron)
	eventually(t, "the rule's next execution on a minute", func(ctx context.Context) (bool, error) {
		var got autoscalingv1alpha1.CronFederatedHPA
		if err := cp.Get(ctx, client.ObjectKeyFromObject(cron), &got); err != nil {
			return false, err
		}
		h := got.Status.ExecutionHistories
		return len(h) == 1 && h[0].NextExecutionTime != nil && h[0].NextExecutionTime.Second() == 0, nil
	})
	inMembers(t, []string{"member1"}, key, newDeployment, "web scaled to 3 at the minute", func(got *appsv1.Deployment) bool { return *got.Spec.Replicas == 3 })
	eventually(t, "the success in the rule's history", func(ctx context.Context) (bool, error) {
		var got autoscalingv1alpha1.CronFederatedHPA
		if err := cp.Get(ctx, client.ObjectKeyFromObject(cron), &got); err != nil {
			return false, err
		}
		h := got.Status.ExecutionHistories
		return len(h) == 1 && len(h[0].SuccessfulExecutions) >= 1 && ptr.Deref(h[0].SuccessfulExecutions[0].AppliedReplicas, 0) == 3, nil
	})
}
