package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
)

// BenchmarkScheduleEndToEnd schedules 1,000 ResourceBindings over 10
// clusters through a running scheduler against a real API server, writes
// included: the bindings are created first, then the scheduler starts and
// the clock runs until every one is scheduled. It reports bindings/s.
func BenchmarkScheduleEndToEnd(b *testing.B) {
	needAPIServer(b)
	const clusters, bindings = 10, 1000
	ctx := context.Background()
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("e2e-%02d", i)
		createCluster(b, fixture.Cluster(names[i]).Region(fmt.Sprintf("region-%d", i%3)).Pods(1_000_000).Allocatable("cpu=100000", "memory=100000Gi"))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
	if err := apiClient.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = apiClient.Delete(context.Background(), ns) })

	for _, events := range []bool{true, false} {
		b.Run(fmt.Sprintf("bindings=%d/clusters=%d/events=%v", bindings, clusters, events), func(b *testing.B) {
			opts := scheduler.Options{TemplateEvents: true}
			if !events {
				opts.Recorder = noEvents{}
			}
			scheduleRounds(b, ns.Name, fmt.Sprintf("bench-%v", events), names, bindings, opts)
		})
	}
}

// scheduleRounds creates n bindings over clusters and times a scheduler
// named prefix-<iteration> with opts scheduling them all, once per b.Loop
// iteration, reporting bindings/s and writes/s.
func scheduleRounds(b *testing.B, namespace, prefix string, clusters []string, n int, opts scheduler.Options) {
	ctx := context.Background()
	var total time.Duration
	var scheduled, writes int64
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		name := fmt.Sprintf("%s-%d", prefix, iter)
		createBindings(b, namespace, name, clusters, n)
		b.StartTimer()

		start := time.Now()
		s, stop := startStoppableScheduler(b, name, opts)
		for s.Stats().Scheduled < int64(n) {
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("only %d of %d scheduled after 5m: %+v", s.Stats().Scheduled, n, s.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
		total += time.Since(start)
		scheduled += int64(n)
		writes += s.Stats().SpecWrites + s.Stats().StatusWrites

		b.StopTimer()
		stop()
		verifyScheduled(b, namespace, name, n)
		b.Logf("%s: %+v", name, s.Stats())
		if err := apiClient.DeleteAllOf(ctx, &workv1alpha2.ResourceBinding{}, client.InNamespace(namespace)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(scheduled)/total.Seconds(), "bindings/s")
	b.ReportMetric(float64(writes)/total.Seconds(), "writes/s")
}

func createBindings(b *testing.B, namespace, schedulerName string, clusters []string, n int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range work {
				rb := fixture.Binding(fmt.Sprintf("%s-app-%d", schedulerName, i)).Replicas(int32(1+i%10)).Request("cpu=100m", "memory=128Mi").
					SchedulerName(schedulerName).ClusterNames(clusters...).Dynamic().Obj()
				rb.Namespace = namespace
				if err := apiClient.Create(context.Background(), rb); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("creating bindings: %v", err)
	}
}

func verifyScheduled(b *testing.B, namespace, schedulerName string, n int) {
	b.Helper()
	var list workv1alpha2.ResourceBindingList
	if err := apiClient.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	count := 0
	for i := range list.Items {
		rb := &list.Items[i]
		if rb.Spec.SchedulerName != schedulerName {
			continue
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) == 0 {
			b.Fatalf("%s not scheduled: %+v", rb.Name, rb.Status)
		}
		count++
	}
	if count != n {
		b.Fatalf("%d bindings scheduled, want %d", count, n)
	}
}

// noEvents drops events, to measure what recording them costs.
type noEvents struct{}

func (noEvents) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}

// BenchmarkAPIPatchBaseline measures what the API server alone sustains:
// 16 writers patching binding status with nothing else running, the
// ceiling for BenchmarkScheduleEndToEnd's two writes per binding.
func BenchmarkAPIPatchBaseline(b *testing.B) {
	needAPIServer(b)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "baseline-"}}
	if err := apiClient.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = apiClient.Delete(context.Background(), ns) })
	const n = 500
	createBindings(b, ns.Name, "baseline", []string{"x"}, n)
	var list workv1alpha2.ResourceBindingList
	if err := apiClient.List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	var patches int
	for iter := 0; b.Loop(); iter++ {
		start := time.Now()
		work := make(chan int)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := range work {
					rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: list.Items[i].Name}}
					patch := fmt.Sprintf(`{"status":{"schedulerObservedGeneration":%d}}`, iter+1)
					if err := apiClient.Status().Patch(ctx, rb, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for i := range list.Items {
			work <- i
		}
		close(work)
		wg.Wait()
		total += time.Since(start)
		patches += len(list.Items)
	}
	b.ReportMetric(float64(patches)/total.Seconds(), "patches/s")
}
