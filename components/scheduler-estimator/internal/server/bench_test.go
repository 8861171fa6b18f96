package server

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

const (
	benchNodes       = 5000
	benchPodsPerNode = 30
)

// benchFixture is a member of benchNodes nodes in three zones, one in ten
// tainted for a dedicated team, each running benchPodsPerNode pods, fed to
// the cache through the same calls the informer handlers make.
func benchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	for i := range benchNodes {
		name := fmt.Sprintf("node-%05d", i)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3), "pool": fmt.Sprintf("pool-%d", i%10),
			}},
			Status: corev1.NodeStatus{Allocatable: list("cpu", "32", "memory", "128Gi", "pods", "110", "ephemeral-storage", "100Gi")},
		}
		if i%10 == 0 {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "team-a", Effect: corev1.TaintEffectNoSchedule}}
		}
		f.nodes.SetNode(n)
		for j := range benchPodsPerNode {
			f.nodes.SetPod(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("%s-%d", name, j), UID: types.UID(fmt.Sprintf("%s-%d", name, j))},
				Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{
					{Name: "app", Resources: corev1.ResourceRequirements{Requests: list("cpu", fmt.Sprintf("%dm", 100+(i*7+j*13)%900), "memory", "512Mi")}},
				}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning},
			})
		}
	}
	return f
}

// BenchmarkAnswer measures one answer of the estimator at 5,000 nodes (and
// 150,000 pods) per member: the service method as gRPC calls it, with the
// cache's read lock, node matching (from the match cache after the first
// answer of a claim, except in the uncached case) and the arithmetic; and
// once through a loopback gRPC connection. It reports the p50 and p99
// latency of the answers besides the mean (ns/op).
func BenchmarkAnswer(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	claim := &estimatorrpc.NodeClaim{
		NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-0", "zone-2"}}},
		}}},
		Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "team-a", Effect: corev1.TaintEffectNoSchedule}},
	}
	replicas := func(claim *estimatorrpc.NodeClaim, assumed ...estimatorrpc.AssumedWorkload) func() error {
		req := &estimatorrpc.MaxAvailableReplicasRequest{
			Cluster:             "member1",
			ReplicaRequirements: estimatorrpc.ReplicaRequirements{NodeClaim: claim, ResourceRequest: list("cpu", "2", "memory", "4Gi"), Namespace: "ns"},
			AssumedWorkloads:    assumed,
		}
		return func() error {
			_, err := f.server.MaxAvailableReplicas(ctx, req)
			return err
		}
	}
	component := func(name string, n int32, cpu string) estimatorrpc.Component {
		return estimatorrpc.Component{Name: name, Replicas: n, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{NodeClaim: claim, ResourceRequest: list("cpu", cpu, "memory", "2Gi")}}
	}
	sets := &estimatorrpc.MaxAvailableComponentSetsRequest{
		Cluster:    "member1",
		Namespace:  "ns",
		Components: []estimatorrpc.Component{component("jobmanager", 1, "1"), component("taskmanager", 4, "4")},
	}
	assumed := estimatorrpc.AssumedWorkload{Namespace: "ns", Components: []estimatorrpc.Component{component("web", 2000, "2")}}

	over := viaGRPC(b, f.server)
	for _, bc := range []struct {
		name string
		call func() error
	}{
		{"gRPC/MaxAvailableReplicas/affinity+toleration", func() error {
			_, err := over.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{
				Cluster:             "member1",
				ReplicaRequirements: estimatorrpc.ReplicaRequirements{NodeClaim: claim, ResourceRequest: list("cpu", "2", "memory", "4Gi"), Namespace: "ns"},
			})
			return err
		}},
		{"MaxAvailableReplicas", replicas(nil)},
		{"MaxAvailableReplicas/affinity+toleration", replicas(claim)},
		{"MaxAvailableReplicas/affinity+toleration/uncached", func() func() error {
			// A claim never seen before on every call: each answer matches
			// every node, as after a change of node labels or taints.
			i := 0
			return func() error {
				i++
				fresh := *claim
				fresh.Tolerations = append(slices.Clone(claim.Tolerations), corev1.Toleration{Key: "bench", Operator: corev1.TolerationOpEqual, Value: strconv.Itoa(i)})
				return replicas(&fresh)()
			}
		}()},
		{"MaxAvailableReplicas/2000-assumed", replicas(claim, assumed)},
		{"MaxAvailableComponentSets", func() error {
			_, err := f.server.MaxAvailableComponentSets(ctx, sets)
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var latencies []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := bc.call(); err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, time.Since(start))
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(latencies[(len(latencies)*99)/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkPodEvent measures what one pod update costs the cache: the
// price of keeping answers from walking the pods.
func BenchmarkPodEvent(b *testing.B) {
	f := benchFixture(b)
	resized := func(cpu string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "moving", UID: "moving"},
			Spec:       corev1.PodSpec{NodeName: "node-00042", Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: list("cpu", cpu)}}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	pods := []*corev1.Pod{resized("250m"), resized("300m")}
	i := 0
	for b.Loop() {
		f.nodes.SetPod(pods[i%2])
		i++
	}
}

// viaGRPC serves srv on a loopback listener and returns a client of it, so
// that an answer's latency includes the codec and the connection.
func viaGRPC(b *testing.B, srv *Server) *estimatorrpc.Client {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	g := grpc.NewServer(estimatorrpc.ServerCodec())
	estimatorrpc.RegisterEstimatorServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	b.Cleanup(g.Stop)
	cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cc.Close() })
	return estimatorrpc.NewClient(cc)
}
