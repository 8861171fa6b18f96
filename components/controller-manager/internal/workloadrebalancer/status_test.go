package workloadrebalancer_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/workloadrebalancer"
)

// deploy and clusterRole are references to workloads.
func deploy(ns, name string) appsv1alpha1.ObjectReference {
	return appsv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
}

func clusterRole(name string) appsv1alpha1.ObjectReference {
	return appsv1alpha1.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}
}

// pending, succeeded and notFound are observed workloads with each result.
func pending(w appsv1alpha1.ObjectReference) appsv1alpha1.ObservedWorkload {
	return appsv1alpha1.ObservedWorkload{Workload: w}
}

func succeeded(w appsv1alpha1.ObjectReference) appsv1alpha1.ObservedWorkload {
	return appsv1alpha1.ObservedWorkload{Workload: w, Result: appsv1alpha1.RebalanceSuccessful}
}

func notFound(w appsv1alpha1.ObjectReference) appsv1alpha1.ObservedWorkload {
	return appsv1alpha1.ObservedWorkload{Workload: w, Result: appsv1alpha1.RebalanceFailed, Reason: appsv1alpha1.RebalanceObjectNotFound}
}

func refs(w ...appsv1alpha1.ObjectReference) []appsv1alpha1.ObjectReference { return w }

func observed(o ...appsv1alpha1.ObservedWorkload) []appsv1alpha1.ObservedWorkload { return o }

func TestObserve(t *testing.T) {
	a, b, c := deploy("ns", "a"), deploy("ns", "b"), deploy("ns", "c")
	tests := []struct {
		name      string
		workloads []appsv1alpha1.ObjectReference
		observed  []appsv1alpha1.ObservedWorkload
		want      []appsv1alpha1.ObservedWorkload
	}{
		{"new rebalancer: every workload pending, sorted", refs(c, a, b), nil,
			observed(pending(a), pending(b), pending(c))},
		{"results kept for workloads still listed", refs(a, b, c), observed(succeeded(a), notFound(b)),
			observed(succeeded(a), notFound(b), pending(c))},
		{"removed workload kept once rescheduled", refs(b), observed(succeeded(a), succeeded(b)),
			observed(succeeded(a), succeeded(b))},
		{"removed workload dropped when it failed or is pending", refs(c), observed(notFound(a), pending(b), succeeded(c)),
			observed(succeeded(c))},
		{"edited reference: the old one as removed, the new one pending", refs(deploy("other", "a")), observed(notFound(a)),
			observed(pending(deploy("other", "a")))},
		{"duplicates observed once", refs(a, a, b), observed(succeeded(b), succeeded(b)),
			observed(pending(a), succeeded(b))},
		{"sorted by apiVersion, kind, namespace, name", refs(clusterRole("x"), deploy("z", "a"), deploy("", "b"), deploy("a", "z")), nil,
			observed(pending(deploy("", "b")), pending(deploy("a", "z")), pending(deploy("z", "a")), pending(clusterRole("x")))},
		{"reordered spec changes nothing", refs(b, a), observed(succeeded(a), succeeded(b)),
			observed(succeeded(a), succeeded(b))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := workloadrebalancer.Observe(tc.workloads, tc.observed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextStatus(t *testing.T) {
	a, b := deploy("ns", "a"), deploy("ns", "b")
	earlier := metav1.NewTime(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	status := func(generation int64, finish *metav1.Time, o ...appsv1alpha1.ObservedWorkload) appsv1alpha1.WorkloadRebalancerStatus {
		return appsv1alpha1.WorkloadRebalancerStatus{ObservedWorkloads: o, ObservedGeneration: generation, FinishTime: finish}
	}
	tests := []struct {
		name       string
		old        appsv1alpha1.WorkloadRebalancerStatus
		observed   []appsv1alpha1.ObservedWorkload
		generation int64
		want       appsv1alpha1.WorkloadRebalancerStatus
	}{
		{"every workload has a result: finished now", status(0, nil), observed(succeeded(a), notFound(b)), 1,
			status(1, &now, succeeded(a), notFound(b))},
		{"a workload pending: not finished", status(0, nil), observed(succeeded(a), pending(b)), 1,
			status(1, nil, succeeded(a), pending(b))},
		{"nothing changed: the finish time stays", status(1, &earlier, succeeded(a)), observed(succeeded(a)), 1,
			status(1, &earlier, succeeded(a))},
		{"workload added and done: finished again", status(1, &earlier, succeeded(a)), observed(succeeded(a), succeeded(b)), 2,
			status(2, &now, succeeded(a), succeeded(b))},
		{"workload added, pending: the old finish time stays until it is done", status(1, &earlier, succeeded(a)), observed(succeeded(a), pending(b)), 2,
			status(2, &earlier, succeeded(a), pending(b))},
		{"only the generation moved: finished again", status(1, &earlier, succeeded(a)), observed(succeeded(a)), 2,
			status(2, &now, succeeded(a))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := workloadrebalancer.NextStatus(tc.old, tc.observed, tc.generation, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NextStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNeedsTrigger(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(created.Add(d)); return &t }
	tests := []struct {
		name        string
		triggeredAt *metav1.Time
		want        bool
	}{
		{"never triggered", nil, true},
		{"triggered before", at(-time.Second), true},
		{"triggered by this rebalancer", at(0), false},
		{"triggered by a newer rebalancer", at(time.Minute), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := workloadrebalancer.NeedsTrigger(created, tc.triggeredAt); got != tc.want {
				t.Errorf("NeedsTrigger = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	finished := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	rebalancer := func(ttl *int32, finish *metav1.Time) *appsv1alpha1.WorkloadRebalancer {
		return &appsv1alpha1.WorkloadRebalancer{
			Spec:   appsv1alpha1.WorkloadRebalancerSpec{TTLSecondsAfterFinished: ttl},
			Status: appsv1alpha1.WorkloadRebalancerStatus{FinishTime: finish},
		}
	}
	tests := []struct {
		name   string
		r      *appsv1alpha1.WorkloadRebalancer
		want   time.Time
		wantOK bool
	}{
		{"no TTL: kept", rebalancer(nil, &finished), time.Time{}, false},
		{"not finished: kept", rebalancer(ptr.To[int32](60), nil), time.Time{}, false},
		{"TTL after the finish", rebalancer(ptr.To[int32](60), &finished), finished.Add(time.Minute), true},
		{"TTL 0: at the finish", rebalancer(ptr.To[int32](0), &finished), finished.Time, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := workloadrebalancer.Expiry(tc.r)
			if !got.Equal(tc.want) || ok != tc.wantOK {
				t.Errorf("Expiry = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
