package e2e

// Cluster failover: like failure_test.go, it takes a member away, so it
// never calls t.Parallel and leaves every member up and Ready.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// TestClusterFailover stops a member that a ClusterTaintPolicy taints
// NoExecute when it is not ready. The Deployment divided over every member
// leaves it: its replicas go to the other members and become available
// there, the evicted copy's Work goes once they are, and when the member
// comes back the taint comes off and the stale copy is removed from it.
// Every step checks that no replica is lost or counted twice.
func TestClusterFailover(t *testing.T) {
	const victim = "member3"
	others := []string{"member1", "member2"}
	ns := namespace(t, "e2e-failover")
	t.Cleanup(func() { restoreFederation(t) })
	if err := waitFederationHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}

	noExecute := corev1.Taint{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}
	ready := []policyv1alpha1.MatchCondition{{ConditionType: clusterv1alpha1.ClusterConditionReady,
		Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}}
	notReady := []policyv1alpha1.MatchCondition{{ConditionType: clusterv1alpha1.ClusterConditionReady,
		Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}}
	ctp := &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-failover-" + victim},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{victim}},
			AddOnConditions:    notReady,
			RemoveOnConditions: ready,
			Taints:             []policyv1alpha1.Taint{{Key: noExecute.Key, Effect: noExecute.Effect}},
		},
	}
	create(t, ctp)
	// Registered before restoreFederation's cleanup runs: the policy goes
	// first, so that nothing taints the member again while it waits.
	t.Cleanup(func() { _ = cp.Delete(context.Background(), ctp) })

	// Six replicas, two per member; the policy tolerates the not-ready
	// taint for 5s only (the webhook's default is 300s).
	seconds := ptr.To[int64](5)
	pp := propagationPolicy(ns, "web", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})
	pp.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	pp.Spec.Placement.ClusterTolerations = []corev1.Toleration{
		{Key: clusterv1alpha1.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds},
		{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds},
	}
	create(t, pp)
	d := deployment(ns, "web", 6, "registry.example/web:1")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	available := func(replicas int32) func(*appsv1.Deployment) bool {
		return func(got *appsv1.Deployment) bool {
			return *got.Spec.Replicas == replicas && got.Status.AvailableReplicas == replicas && got.Status.ObservedGeneration == got.Generation
		}
	}
	inMembers(t, allMembers(), key, newDeployment, "web 2/2 available", available(2))
	replicasIn(t, allMembers(), key, map[string]int32{"member1": 2, "member2": 2, victim: 2})

	if err := fed.StopMember(t.Context(), victim); err != nil {
		t.Fatalf("stopping %s: %v", victim, err)
	}
	// The cluster controller's NoSchedule taint and the policy's NoExecute
	// one, in whichever order they came.
	eventually(t, victim+" not ready and tainted by the policy", func(ctx context.Context) (bool, error) {
		got := &clusterv1alpha1.Cluster{}
		if err := cp.Get(ctx, client.ObjectKey{Name: victim}, got); err != nil {
			return false, err
		}
		if cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond == nil || cond.Status != metav1.ConditionFalse {
			return false, nil
		}
		taints := healthTaints(got)
		slices.Sort(taints)
		return slices.Equal(taints, []string{clusterv1alpha1.TaintClusterNotReady + ":" + string(corev1.TaintEffectNoExecute),
			clusterv1alpha1.TaintClusterNotReady + ":" + string(corev1.TaintEffectNoSchedule)}), nil
	})

	// Evicted after the toleration: rescheduled to the others, the
	// evicted cluster kept in a task until they run the replicas.
	rbKey := client.ObjectKey{Namespace: ns, Name: names.Binding(d.Name, "Deployment")}
	eventually(t, "web evicted from "+victim+" and its replicas placed on the others", func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, rbKey, &rb); err != nil {
			return false, err
		}
		return maps.Equal(targetReplicas(rb.Spec.Clusters), map[string]int32{"member1": 3, "member2": 3}), nil
	})
	inMembers(t, others, key, newDeployment, "web 3/3 available", available(3))
	replicasIn(t, others, key, map[string]int32{"member1": 3, "member2": 3})

	// The replacement is up: the task ends and the evicted copy's Work
	// goes, held by its finalizer until the member can be cleaned.
	eventually(t, "the eviction task of "+victim+" ended", func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, rbKey, &rb); err != nil {
			return false, err
		}
		return len(rb.Spec.GracefulEvictionTasks) == 0, nil
	})
	coreEvent(t, ns, "Deployment", d.Name, flotillaevents.ReasonEvictWorkloadSucceed, func(msg string) bool {
		return msg == fmt.Sprintf("Evict from cluster %s succeed.", victim)
	})
	workKey := client.ObjectKey{Namespace: names.ExecutionSpace(victim), Name: names.Work(ns, d.Name, "Deployment")}
	eventually(t, "the Work of "+victim+" being deleted", func(ctx context.Context) (bool, error) {
		var w workv1alpha1.Work
		err := cp.Get(ctx, workKey, &w)
		return apierrors.IsNotFound(err) || (err == nil && !w.DeletionTimestamp.IsZero()), client.IgnoreNotFound(err)
	})

	if err := fed.StartMember(t.Context(), victim); err != nil {
		t.Fatalf("starting %s again: %v", victim, err)
	}
	waitClusterReady(t, victim, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)
	goneFrom(t, []string{victim}, key, newDeployment())
	eventually(t, "the Work of "+victim+" gone", func(ctx context.Context) (bool, error) {
		err := cp.Get(ctx, workKey, &workv1alpha1.Work{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// Divided replicas stay where failover put them, as in Karmada: moving
	// them back is a rebalance a user asks for.
	replicasIn(t, allMembers(), key, map[string]int32{"member1": 3, "member2": 3})
}

// targetReplicas maps spec.clusters to their replicas.
func targetReplicas(targets []workv1alpha2.TargetCluster) map[string]int32 {
	m := make(map[string]int32, len(targets))
	for _, t := range targets {
		m[t.Name] = t.Replicas
	}
	return m
}

// replicasIn checks that the Deployment's spec replicas in the members sum
// to the template's, member by member as want says (absent: none there).
func replicasIn(t *testing.T, members []string, key client.ObjectKey, want map[string]int32) {
	t.Helper()
	for _, m := range members {
		var got appsv1.Deployment
		err := member(t, m).Client.Get(t.Context(), key, &got)
		switch {
		case apierrors.IsNotFound(err):
			if want[m] != 0 {
				t.Errorf("%s has no %s, want %d replicas", m, key, want[m])
			}
		case err != nil:
			t.Errorf("reading %s in %s: %v", key, m, err)
		case *got.Spec.Replicas != want[m]:
			t.Errorf("%s runs %s with %d replicas, want %d", m, key, *got.Spec.Replicas, want[m])
		}
	}
}
