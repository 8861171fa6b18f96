package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/core"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

// benchClusters builds m clusters over 10 regions, 3 zones each, 3
// providers, with capacity; one in twenty carries a not-ready taint.
func benchClusters(m int) *cache.Snapshot {
	r := rand.New(rand.NewPCG(uint64(m), 7))
	builders := make([]*fixture.ClusterBuilder, m)
	for i := range builders {
		region := fmt.Sprintf("region-%d", i%10)
		b := fixture.Cluster(fmt.Sprintf("member-%04d", i)).
			Region(region).Zone(fmt.Sprintf("%s-%c", region, 'a'+rune(i/10%3))).
			Provider([]string{"aws", "gcp", "azure"}[i%3]).
			Label("env", []string{"prod", "staging"}[i%2]).
			Label("rack", fmt.Sprintf("rack-%d", i%7)).
			Allocatable(fmt.Sprintf("pods=%d", 500+r.IntN(2000)), fmt.Sprintf("cpu=%d", 64+r.IntN(512)), fmt.Sprintf("memory=%dGi", 256+r.IntN(2048))).
			Allocated(fmt.Sprintf("pods=%d", r.IntN(400)), fmt.Sprintf("cpu=%d", r.IntN(60)), fmt.Sprintf("memory=%dGi", r.IntN(200)))
		if i%20 == 19 {
			b.Taint(clusterv1alpha1.TaintClusterNotReady, "", corev1.TaintEffectNoSchedule)
		}
		builders[i] = b
	}
	return fixture.Snapshot(builders...)
}

// benchBindings builds n bindings of one shape; a third are already
// scheduled somewhere (a steady reschedule after a scale-up).
func benchBindings(n, clusters int, shape func(*fixture.BindingBuilder)) []*workv1alpha2.ResourceBindingSpec {
	r := rand.New(rand.NewPCG(uint64(n), uint64(clusters)))
	out := make([]*workv1alpha2.ResourceBindingSpec, n)
	for i := range out {
		b := fixture.Binding(fmt.Sprintf("app-%d", i)).Replicas(int32(1+r.IntN(50))).Request("cpu=250m", "memory=512Mi")
		if i%2 == 0 {
			b.Affinity(&policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}})
		}
		shape(b)
		if i%3 == 0 {
			b.Scheduled(fixture.T(fmt.Sprintf("member-%04d", r.IntN(clusters)), 1))
		}
		out[i] = b.Spec()
	}
	return out
}

func dynamicShape(b *fixture.BindingBuilder) { b.Dynamic() }

func duplicatedSpreadShape(b *fixture.BindingBuilder) {
	b.Duplicated().
		Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 3}).
		Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 3, MaxGroups: 6})
}

func staticShape(b *fixture.BindingBuilder) {
	b.Weighted(fixture.Weight{Cluster: "member-0001", Weight: 3}, fixture.Weight{Cluster: "member-0002", Weight: 2}, fixture.Weight{Cluster: "member-0003", Weight: 1})
}

func aggregatedZoneShape(b *fixture.BindingBuilder) {
	b.Aggregated().
		Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldZone, MinGroups: 1, MaxGroups: 2}).
		Spread(policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 4})
}

// BenchmarkSchedule measures the pure decision (filter, score, select,
// assign) of one binding against M clusters, cycling through N bindings.
// It reports bindings/s and the p99 decision latency.
func BenchmarkSchedule(b *testing.B) {
	shapes := []struct {
		name  string
		shape func(*fixture.BindingBuilder)
	}{
		{"dynamic-weighted", dynamicShape},
		{"duplicated-spread", duplicatedSpreadShape},
		{"static-weighted", staticShape},
		{"aggregated-zone-spread", aggregatedZoneShape},
	}
	for _, m := range []int{100, 1000} {
		snap := benchClusters(m)
		for _, s := range shapes {
			b.Run(fmt.Sprintf("clusters=%d/%s", m, s.name), func(b *testing.B) {
				const n = 1000
				specs := benchBindings(n, m, s.shape)
				alg := algorithm()
				ctx := context.Background()
				durations := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for i := 0; b.Loop(); i++ {
					t0 := time.Now()
					if _, err := alg.Schedule(ctx, snap, core.Input{Spec: specs[i%n]}); err != nil && !core.IsUnschedulable(err) {
						b.Fatal(err)
					}
					durations = append(durations, time.Since(t0))
				}
				elapsed := time.Since(start)
				b.StopTimer()
				reportLatency(b, durations, elapsed)
			})
		}
	}
}

func reportLatency(b *testing.B, durations []time.Duration, elapsed time.Duration) {
	if len(durations) == 0 {
		return
	}
	slices.Sort(durations)
	p99 := durations[min(len(durations)-1, len(durations)*99/100)]
	b.ReportMetric(float64(p99.Nanoseconds())/1e6, "p99-ms")
	b.ReportMetric(float64(len(durations))/elapsed.Seconds(), "bindings/s")
}
