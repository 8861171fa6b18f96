package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins"
)

func algorithm() *core.Algorithm { return core.NewAlgorithm(plugins.NewDefaultFramework()) }

func term(name string, clusters ...string) policyv1alpha1.ClusterAffinityTerm {
	return policyv1alpha1.ClusterAffinityTerm{AffinityName: name, ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: clusters}}
}

func TestSchedule(t *testing.T) {
	notReady := clusterv1alpha1.TaintClusterNotReady
	threePods := func(name string, pods int64) *fixture.ClusterBuilder { return fixture.Cluster(name).Pods(pods) }
	tests := []struct {
		name         string
		snap         *cache.Snapshot
		binding      *fixture.BindingBuilder
		observed     string
		fresh        bool
		want         []workv1alpha2.TargetCluster
		wantAffinity string
		wantErr      string // exact message
		wantErrType  any
	}{{
		name:    "no cluster fits",
		snap:    fixture.Snapshot(fixture.Cluster("member1").Taint(notReady, "", corev1.TaintEffectNoSchedule), fixture.Cluster("member2"), fixture.Cluster("member3")),
		binding: fixture.Binding("nginx").Replicas(3).ClusterNames("member1"),
		wantErr: "0/3 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready}, 2 cluster(s) did not match the placement cluster affinity.",
	}, {
		name:    "duplicated to every fitting cluster",
		snap:    fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b"), fixture.Cluster("c").Taint(notReady, "", corev1.TaintEffectNoSchedule)),
		binding: fixture.Binding("nginx").Replicas(3),
		want:    []workv1alpha2.TargetCluster{T("a", 3), T("b", 3)},
	}, {
		name:    "static weights 2:1",
		snap:    fixture.Snapshot(fixture.Cluster("member1"), fixture.Cluster("member2")),
		binding: fixture.Binding("nginx").Replicas(3).Weighted(fixture.Weight{Cluster: "member1", Weight: 2}, fixture.Weight{Cluster: "member2", Weight: 1}),
		want:    []workv1alpha2.TargetCluster{T("member1", 2), T("member2", 1)},
	}, {
		name:    "static list matching no candidate falls back to equal weights",
		snap:    fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b")),
		binding: fixture.Binding("nginx").Replicas(4).Weighted(fixture.Weight{Cluster: "gone", Weight: 2}),
		want:    []workv1alpha2.TargetCluster{T("a", 2), T("b", 2)},
	}, {
		name:    "dynamic weights by free pods",
		snap:    fixture.Snapshot(threePods("a", 30), threePods("b", 10)),
		binding: fixture.Binding("nginx").Replicas(8).Dynamic(),
		want:    []workv1alpha2.TargetCluster{T("a", 6), T("b", 2)},
	}, {
		name:        "not enough capacity",
		snap:        fixture.Snapshot(threePods("a", 3), threePods("b", 2), fixture.Cluster("c").Taint(notReady, "", corev1.TaintEffectNoSchedule)),
		binding:     fixture.Binding("nginx").Replicas(8).Dynamic(),
		wantErr:     "2/3 clusters passed the filters (1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready}), but they can hold 5 more replicas, 8 are needed.",
		wantErrType: &framework.UnschedulableError{},
	}, {
		name:    "evicted cluster's replicas move",
		snap:    fixture.Snapshot(threePods("a", 100), threePods("b", 100)),
		binding: fixture.Binding("nginx").Replicas(4).Dynamic().Scheduled(T("a", 2)).Evicting("b"),
		want:    []workv1alpha2.TargetCluster{T("a", 4)},
	}, {
		name:    "a deleting cluster loses what it held",
		snap:    fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b").Deleting()),
		binding: fixture.Binding("nginx").Replicas(4).Weighted().Scheduled(T("a", 2), T("b", 2)),
		want:    []workv1alpha2.TargetCluster{T("a", 4)},
	}, {
		name:    "a deleting cluster gets no new placement",
		snap:    fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b").Deleting()),
		binding: fixture.Binding("nginx").Replicas(2).ClusterNames("b"),
		wantErr: "0/2 clusters are available: 1 cluster(s) did not match the placement cluster affinity, 1 cluster(s) is being deleted.",
	}, {
		name:    "current clusters keep a workload despite taints",
		snap:    fixture.Snapshot(fixture.Cluster("a").Taint(notReady, "", corev1.TaintEffectNoExecute), fixture.Cluster("b").Taint("dedicated", "", corev1.TaintEffectNoSchedule)),
		binding: fixture.Binding("nginx").Replicas(2).Scheduled(T("a", 2)),
		want:    []workv1alpha2.TargetCluster{T("a", 2)},
	}, {
		name:         "first feasible affinity term wins",
		snap:         fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b").Taint(notReady, "", corev1.TaintEffectNoSchedule)),
		binding:      fixture.Binding("nginx").Replicas(2).Terms(term("primary", "b"), term("backup", "a")),
		want:         []workv1alpha2.TargetCluster{T("a", 2)},
		wantAffinity: "backup",
	}, {
		name:         "steady reschedule starts at the term in use",
		snap:         fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b")),
		binding:      fixture.Binding("nginx").Replicas(2).Terms(term("primary", "b"), term("backup", "a")),
		observed:     "backup",
		want:         []workv1alpha2.TargetCluster{T("a", 2)},
		wantAffinity: "backup",
	}, {
		name:         "rebalance goes back to the first term",
		snap:         fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b")),
		binding:      fixture.Binding("nginx").Replicas(2).Terms(term("primary", "b"), term("backup", "a")),
		observed:     "backup",
		fresh:        true,
		want:         []workv1alpha2.TargetCluster{T("b", 2)},
		wantAffinity: "primary",
	}, {
		name: "overflow affinity takes what the primary cannot hold",
		snap: fixture.Snapshot(threePods("a", 4), threePods("b", 100)),
		binding: fixture.Binding("nginx").Replicas(10).Dynamic().Terms(policyv1alpha1.ClusterAffinityTerm{
			AffinityName:       "onprem",
			ClusterAffinity:    policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}},
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}}}},
		}),
		want:         []workv1alpha2.TargetCluster{T("a", 4), T("b", 6)},
		wantAffinity: "onprem",
	}, {
		name: "overflow is not used by Duplicated",
		snap: fixture.Snapshot(fixture.Cluster("a"), fixture.Cluster("b")),
		binding: fixture.Binding("nginx").Replicas(10).Terms(policyv1alpha1.ClusterAffinityTerm{
			AffinityName:       "onprem",
			ClusterAffinity:    policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}},
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}}}},
		}),
		want:         []workv1alpha2.TargetCluster{T("a", 10)},
		wantAffinity: "onprem",
	}, {
		name: "spread over regions, Duplicated",
		snap: fixture.Snapshot(fixture.Cluster("a").Region("eu"), fixture.Cluster("b").Region("eu"), fixture.Cluster("c").Region("us"), fixture.Cluster("d")),
		binding: fixture.Binding("nginx").Replicas(1).
			Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 2}).
			Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2, MaxGroups: 2}),
		want: []workv1alpha2.TargetCluster{T("a", 1), T("c", 1)},
	}, {
		name:        "invalid selector is an internal error",
		snap:        fixture.Snapshot(fixture.Cluster("a")),
		binding:     fixture.Binding("nginx").Affinity(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Nope"}}}}),
		wantErr:     `cluster affinity label selector: "Nope" is not a valid label selector operator`,
		wantErrType: errors.New(""),
	}, {
		name:    "multi-component workload kept whole",
		snap:    fixture.Snapshot(fixture.Cluster("a").Allocatable("pods=100", "cpu=4"), fixture.Cluster("b").Allocatable("pods=100", "cpu=40")),
		binding: fixture.Binding("flink").Dynamic().Component("jobmanager", 1, "cpu=1").Component("taskmanager", 4, "cpu=1"),
		want: []workv1alpha2.TargetCluster{{Name: "b", Replicas: 5, Components: []workv1alpha2.ComponentReplicas{
			{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: 4}}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := algorithm().Schedule(context.Background(), tc.snap, core.Input{Spec: tc.binding.Spec(), ObservedAffinityName: tc.observed, Fresh: tc.fresh})
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("want error %q, got %v", tc.wantErr, d.Clusters)
				}
				if err.Error() != tc.wantErr {
					t.Errorf("message\n got: %s\nwant: %s", err, tc.wantErr)
				}
				switch tc.wantErrType.(type) {
				case nil:
					var fit *framework.FitError
					if !errors.As(err, &fit) {
						t.Errorf("want a FitError, got %T", err)
					}
				case *framework.UnschedulableError:
					var u *framework.UnschedulableError
					if !errors.As(err, &u) {
						t.Errorf("want an UnschedulableError, got %T", err)
					}
				default:
					if core.IsUnschedulable(err) {
						t.Errorf("want an internal error, got %T", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, d.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if d.AffinityName != tc.wantAffinity {
				t.Errorf("affinity %q, want %q", d.AffinityName, tc.wantAffinity)
			}
		})
	}
}
