package scheduler_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/estimatortest"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/estimator"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// BenchmarkScheduleWithEstimators is BenchmarkScheduleEndToEnd's run
// (1,000 dynamically weighted bindings over 10 clusters) with the general
// estimate alone, then with a real scheduler estimator per cluster asked
// over gRPC for every binding. Each estimator serves the API server's 100
// nodes, as if each cluster were that big: what is measured is the
// scheduler's cost of asking, round trips included.
func BenchmarkScheduleWithEstimators(b *testing.B) {
	needAPIServer(b)
	const clusters, bindings, nodes = 10, 1000, 100
	ctx := context.Background()
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("est-%02d", i)
		createCluster(b, fixture.Cluster(names[i]).Pods(1_000_000).Allocatable("cpu=100000", "memory=100000Gi"))
	}
	createNodes(b, nodes)
	if err := apiClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-estimators"}}); client.IgnoreAlreadyExists(err) != nil {
		b.Fatal(err)
	}
	for _, name := range names {
		estimatortest.Serve(b, apiConfig, apiClient, name)
	}
	dialer, err := estimatorrpc.NewDialer(estimatorrpc.DialOptions{
		Port: estimatorrpc.DefaultPort, ServicePrefix: estimatorrpc.DefaultServicePrefix,
		ServiceNamespace: estimatorrpc.DefaultServiceNamespace, Timeout: estimatorrpc.DefaultTimeout,
	}, apiClient)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dialer.Close)

	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("bindings=%d/clusters=%d/estimators=%v", bindings, clusters, on), func(b *testing.B) {
			opts := scheduler.Options{Recorder: noEvents{}}
			if on {
				opts.Estimators = []estimator.Estimator{estimator.NewAccurate(dialer, false)}
			}
			scheduleRounds(b, "bench-estimators", fmt.Sprintf("est-%v", on), names, bindings, opts)
		})
	}
}

// createNodes registers n nodes with room for everything the bindings ask.
func createNodes(b *testing.B, n int) {
	b.Helper()
	ctx := context.Background()
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("4000Gi"), corev1.ResourcePods: resource.MustParse("10000")}
	for i := range n {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-node-%03d", i)}}
		if err := apiClient.Create(ctx, node); client.IgnoreAlreadyExists(err) != nil {
			b.Fatal(err)
		}
		node.Status = corev1.NodeStatus{Capacity: room, Allocatable: room, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
		if err := apiClient.Status().Update(ctx, node); err != nil {
			b.Fatal(err)
		}
		// The API server taints a new node not-ready; with no node
		// lifecycle controller here to lift it, the benchmark does.
		node.Spec.Taints = nil
		if err := apiClient.Update(ctx, node); err != nil {
			b.Fatal(err)
		}
	}
}
