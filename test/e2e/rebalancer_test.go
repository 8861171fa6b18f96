package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// rebalancerClient is a client of the control plane that also knows
// apps.karmada.io, which the suite's shared client leaves out.
func rebalancerClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha2.AddToScheme, appsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(fed.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allocatedCPU is the CPU that a member's Cluster reports allocated to
// pods, in millicores.
func allocatedCPU(ctx context.Context, name string) (int64, error) {
	var c clusterv1alpha1.Cluster
	if err := cp.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
		return 0, err
	}
	if c.Status.ResourceSummary == nil {
		return 0, fmt.Errorf("%s reports no resource summary", name)
	}
	q := c.Status.ResourceSummary.Allocated[corev1.ResourceCPU]
	return q.MilliValue(), nil
}

// fillerCPU is what each filler pod requests: one fits a kwok node of 8
// CPUs, two do not.
const fillerCPU = 5500

// takeCPU runs, in member m and outside the federation, one filler pod per
// node (three), so that m reports most of its CPU allocated; deleting the
// returned Deployment gives it back.
func takeCPU(t *testing.T, m, ns string) *appsv1.Deployment {
	t.Helper()
	filler := deployment(ns, "filler", 3, "registry.example/filler:1")
	filler.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: *resource.NewMilliQuantity(fillerCPU, resource.DecimalSI)}
	mc := member(t, m).Client
	if err := mc.Create(t.Context(), filler); err != nil {
		t.Fatalf("creating the filler in %s: %v", m, err)
	}
	t.Cleanup(func() { _ = mc.Delete(context.Background(), filler) })
	eventually(t, "the filler running in "+m, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := mc.Get(ctx, client.ObjectKeyFromObject(filler), &d); err != nil {
			return false, err
		}
		return d.Status.AvailableReplicas == 3, nil
	})
	eventually(t, m+" reporting the filler's CPU allocated", func(ctx context.Context) (bool, error) {
		cpu, err := allocatedCPU(ctx, m)
		return cpu >= 3*fillerCPU, err
	})
	return filler
}

// scheduledTargets reads the binding under key: its targets once it is
// scheduled, nil before. At every look the targets must hold the
// template's replicas, none lost and none doubled.
func scheduledTargets(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, replicas int32) (*workv1alpha2.ResourceBinding, map[string]int32, error) {
	t.Helper()
	var rb workv1alpha2.ResourceBinding
	if err := c.Get(ctx, key, &rb); err != nil {
		return nil, nil, err
	}
	if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) == 0 {
		return &rb, nil, nil
	}
	targets := targetReplicas(rb.Spec.Clusters)
	var sum int32
	for _, n := range targets {
		sum += n
	}
	if sum != replicas {
		t.Fatalf("the binding places %d replicas (%v), the template has %d", sum, targets, replicas)
	}
	return &rb, targets, nil
}

// availableIn waits until every member runs the Deployment under key with
// the replicas want gives it (none: absent), all available, and checks
// that the members' counts are exactly those.
func availableIn(t *testing.T, key client.ObjectKey, want map[string]int32) {
	t.Helper()
	for _, m := range allMembers() {
		n := want[m]
		eventually(t, fmt.Sprintf("%s in %s with %d replicas available", key.Name, m, n), func(ctx context.Context) (bool, error) {
			var got appsv1.Deployment
			err := member(t, m).Client.Get(ctx, key, &got)
			if apierrors.IsNotFound(err) {
				return n == 0, nil
			}
			if err != nil {
				return false, err
			}
			return *got.Spec.Replicas == n && got.Status.AvailableReplicas == n && got.Status.ObservedGeneration == got.Generation, nil
		})
	}
	replicasIn(t, allMembers(), key, want)
}

// TestWorkloadRebalancer: a Deployment divided by dynamic weight
// (available replicas) is placed while most of member1's CPU is taken, so
// member1 gets less than its share. When that CPU is freed the placement
// stays, as in Karmada: replicas do not move by themselves. A
// WorkloadRebalancer asks for a fresh schedule, which divides the replicas
// evenly now that the members have the same room; the rebalancer reports
// the workload Successful with a finish time and goes after its TTL.
func TestWorkloadRebalancer(t *testing.T) {
	t.Parallel()
	const (
		replicas int32 = 6
		busy           = "member1"
		ttl      int32 = 10
	)
	ctl := rebalancerClient(t)
	ns := namespace(t, "e2e-rebalancer")

	// The members have three kwok nodes of 8 CPUs. The filler leaves
	// member1 about 7.5 CPUs: room for three replicas of 2 CPUs where the
	// other members have twelve. Every node keeps room for one replica, so
	// whatever member1 gets runs. No other scenario requests much CPU, so
	// none is squeezed.
	filler := takeCPU(t, busy, ns)

	pp := propagationPolicy(ns, "web", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})
	pp.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}
	create(t, pp)
	d := deployment(ns, "web", replicas, "registry.example/web:1")
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	rbKey := client.ObjectKey{Namespace: ns, Name: names.Binding(d.Name, "Deployment")}

	var before map[string]int32
	var firstSchedule metav1.Time
	eventually(t, "web scheduled", func(ctx context.Context) (bool, error) {
		rb, targets, err := scheduledTargets(ctx, t, ctl, rbKey, replicas)
		if err != nil || targets == nil || rb.Status.LastScheduledTime == nil {
			return false, err
		}
		before, firstSchedule = targets, *rb.Status.LastScheduledTime
		return true, nil
	})
	t.Logf("placed while %s was busy: %v", busy, before)
	if before[busy] >= replicas/3 {
		t.Fatalf("with its CPU taken, %s got %d replicas of %v; the scenario needs it to get less than an even share", busy, before[busy], before)
	}
	availableIn(t, key, before)

	// member1 gains its CPU back. Nothing moves by itself: resource
	// summaries do not trigger a schedule.
	if err := member(t, busy).Client.Delete(t.Context(), filler); err != nil {
		t.Fatalf("deleting the filler in %s: %v", busy, err)
	}
	eventually(t, busy+" reporting its CPU free again", func(ctx context.Context) (bool, error) {
		cpu, err := allocatedCPU(ctx, busy)
		return cpu < fillerCPU, err
	})
	_, targets, err := scheduledTargets(t.Context(), t, ctl, rbKey, replicas)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(targets, before) {
		t.Fatalf("web moved from %v to %v before any rebalance was asked for", before, targets)
	}
	// rescheduleTriggeredAt and lastScheduledTime have second precision: a
	// rebalancer created within the second of the first schedule would not
	// count as newer, in Karmada as here.
	eventually(t, "a second past the first schedule", func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(firstSchedule.Time), nil
	})

	rebalancer := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-rebalancer-web"},
		Spec: appsv1alpha1.WorkloadRebalancerSpec{
			Workloads:               []appsv1alpha1.ObjectReference{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: d.Name}},
			TTLSecondsAfterFinished: ptr.To(ttl),
		},
	}
	if err := ctl.Create(t.Context(), rebalancer); err != nil {
		t.Fatalf("creating the WorkloadRebalancer: %v", err)
	}
	t.Cleanup(func() { _ = ctl.Delete(context.Background(), rebalancer) })

	// The TTL is long enough to read the status before it goes.
	eventually(t, "the rebalancer reporting web Successful and its finish time", func(ctx context.Context) (bool, error) {
		var got appsv1alpha1.WorkloadRebalancer
		if err := ctl.Get(ctx, client.ObjectKeyFromObject(rebalancer), &got); err != nil {
			return false, err
		}
		if got.Status.FinishTime == nil {
			return false, nil
		}
		want := []appsv1alpha1.ObservedWorkload{{Workload: rebalancer.Spec.Workloads[0], Result: appsv1alpha1.RebalanceSuccessful}}
		if got.Status.ObservedGeneration != got.Generation || len(got.Status.ObservedWorkloads) != 1 || got.Status.ObservedWorkloads[0] != want[0] {
			return false, fmt.Errorf("status %+v, want observedWorkloads %+v for generation %d", got.Status, want, got.Generation)
		}
		rebalancer.CreationTimestamp = got.CreationTimestamp
		return true, nil
	})

	even := map[string]int32{"member1": 2, "member2": 2, "member3": 2}
	eventually(t, "web rescheduled afresh and divided evenly", func(ctx context.Context) (bool, error) {
		rb, targets, err := scheduledTargets(ctx, t, ctl, rbKey, replicas)
		if err != nil || targets == nil {
			return false, err
		}
		if at := rb.Spec.RescheduleTriggeredAt; at == nil || !at.Equal(&rebalancer.CreationTimestamp) {
			return false, fmt.Errorf("rescheduleTriggeredAt %v, want the rebalancer's creation %v", at, rebalancer.CreationTimestamp)
		}
		last := rb.Status.LastScheduledTime
		return last != nil && last.After(firstSchedule.Time) && maps.Equal(targets, even), nil
	})
	availableIn(t, key, even)

	eventually(t, "the rebalancer deleted after its TTL", func(ctx context.Context) (bool, error) {
		err := ctl.Get(ctx, client.ObjectKeyFromObject(rebalancer), &appsv1alpha1.WorkloadRebalancer{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
