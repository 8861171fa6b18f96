package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/unschedulable"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// fixture is a Server over in-memory stores the way the app's informers
// fill them.
type fixture struct {
	nodes  *cache.Cache
	quotas toolscache.Indexer
	server *Server
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{
		nodes:  cache.New(),
		quotas: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}),
	}
	byController := toolscache.Indexers{unschedulable.ControllerIndex: unschedulable.IndexByController}
	f.server = New(Options{
		ClusterName: "member1",
		Nodes:       f.nodes,
		Quotas:      corelisters.NewResourceQuotaLister(f.quotas),
		Workloads: &unschedulable.Workloads{
			Deployments: appslisters.NewDeploymentLister(toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})),
			ReplicaSets: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, byController),
			Pods:        toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, byController),
		},
		Parallelism: 4,
	})
	return f
}

func (f *fixture) node(name string, allocatable ...string) {
	f.nodes.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: list(allocatable...)}})
}

func (f *fixture) pod(name, node string, requests ...string) {
	f.nodes.SetPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: list(requests...)}}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	})
}

func TestAnswers(t *testing.T) {
	f := newFixture(t)
	f.node("a", "cpu", "4", "memory", "8Gi", "pods", "110")
	f.node("b", "cpu", "4", "memory", "8Gi", "pods", "110")
	f.pod("p1", "a", "cpu", "2500m")
	if err := f.quotas.Add(&corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: "cpu"},
		Status:     corev1.ResourceQuotaStatus{Hard: list("requests.cpu", "3"), Used: list("requests.cpu", "1")},
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		namespace string
		want      int32
	}{
		{namespace: "ns", want: 1 + 4},
		{namespace: "limited", want: 2},
		{namespace: "", want: 1 + 4},
	} {
		resp, err := f.server.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{
			Cluster:             "member1",
			ReplicaRequirements: estimatorrpc.ReplicaRequirements{ResourceRequest: list("cpu", "1"), Namespace: tt.namespace},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.MaxReplicas != tt.want {
			t.Errorf("namespace %q: MaxReplicas = %d, want %d", tt.namespace, resp.MaxReplicas, tt.want)
		}
	}
	sets, err := f.server.MaxAvailableComponentSets(ctx, &estimatorrpc.MaxAvailableComponentSetsRequest{
		Cluster:    "member1",
		Namespace:  "limited",
		Components: []estimatorrpc.Component{{Name: "x", Replicas: 2, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{ResourceRequest: list("cpu", "500m")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sets.MaxSets != 2 {
		t.Errorf("MaxSets = %d, want 2 (quota: 2 CPU left, 1 CPU a set)", sets.MaxSets)
	}

	// Assumed workloads take their room, unless the server ignores them
	// (SchedulingOvercommitProtection off).
	withAssumed := &estimatorrpc.MaxAvailableReplicasRequest{
		Cluster:             "member1",
		ReplicaRequirements: estimatorrpc.ReplicaRequirements{ResourceRequest: list("cpu", "1"), Namespace: "ns"},
		AssumedWorkloads: []estimatorrpc.AssumedWorkload{{Namespace: "ns", Components: []estimatorrpc.Component{
			{Name: "web", Replicas: 3, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{ResourceRequest: list("cpu", "1")}},
		}}},
	}
	for _, tt := range []struct {
		ignore bool
		want   int32
	}{{ignore: false, want: 5 - 3}, {ignore: true, want: 5}} {
		f.server.o.IgnoreAssumed = tt.ignore
		resp, err := f.server.MaxAvailableReplicas(ctx, withAssumed)
		if err != nil {
			t.Fatal(err)
		}
		if resp.MaxReplicas != tt.want {
			t.Errorf("IgnoreAssumed %v: MaxReplicas = %d, want %d", tt.ignore, resp.MaxReplicas, tt.want)
		}
	}
	if len(withAssumed.AssumedWorkloads) != 1 {
		t.Error("ignoring assumed workloads changed the caller's request")
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	f.node("a", "cpu", "4", "pods", "110")
	ctx := context.Background()
	call := map[string]func(cluster string) error{
		"MaxAvailableReplicas": func(cluster string) error {
			_, err := f.server.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: cluster})
			return err
		},
		"MaxAvailableComponentSets": func(cluster string) error {
			_, err := f.server.MaxAvailableComponentSets(ctx, &estimatorrpc.MaxAvailableComponentSetsRequest{Cluster: cluster, Components: []estimatorrpc.Component{{Replicas: 1}}})
			return err
		},
		"GetUnschedulableReplicas": func(cluster string) error {
			_, err := f.server.GetUnschedulableReplicas(ctx, &estimatorrpc.UnschedulableReplicasRequest{Cluster: cluster, Resource: estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "absent"}})
			return err
		},
	}
	for method, c := range call {
		err := c("member2")
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "cluster") || !strings.Contains(err.Error(), "member1") {
			t.Errorf("%s for another cluster: error = %v, want InvalidArgument naming the cluster field", method, err)
		}
	}
	if err := call["GetUnschedulableReplicas"]("member1"); status.Code(err) != codes.NotFound {
		t.Errorf("absent Deployment: error = %v, want NotFound", err)
	}

	_, err := f.server.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{
		Cluster: "member1",
		ReplicaRequirements: estimatorrpc.ReplicaRequirements{NodeClaim: &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpGt, Values: []string{"a", "b"}}},
		}}}}},
	})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "replicaRequirements.nodeClaim.nodeAffinity.nodeSelectorTerms[0].matchExpressions[0].values") {
		t.Errorf("bad affinity: error = %v, want InvalidArgument naming the field", err)
	}

	_, err = f.server.GetUnschedulableReplicas(ctx, &estimatorrpc.UnschedulableReplicasRequest{Cluster: "member1", Resource: estimatorrpc.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: "ns", Name: "j"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "resource.kind") {
		t.Errorf("Job: error = %v, want InvalidArgument naming resource.kind", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for i := range 300 {
		f.node(fmt.Sprintf("n%03d", i), "cpu", "4", "pods", "110")
	}
	_, err = f.server.MaxAvailableReplicas(cancelled, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: "member1"})
	if status.Code(err) != codes.Canceled {
		t.Errorf("cancelled request: error = %v, want Canceled", err)
	}
}

// TestConcurrentAnswersAndEvents answers while pods and node labels change
// (run with -race); afterwards the server, match cache included, answers as
// a fresh server does.
func TestConcurrentAnswersAndEvents(t *testing.T) {
	f := newFixture(t)
	label := func(i int, zone string) {
		f.nodes.SetNode(&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", i), Labels: map[string]string{"zone": zone}},
			Status:     corev1.NodeStatus{Allocatable: list("cpu", "8", "pods", "110")},
		})
	}
	for i := range 50 {
		label(i, "a")
	}
	req := &estimatorrpc.MaxAvailableReplicasRequest{
		Cluster: "member1",
		ReplicaRequirements: estimatorrpc.ReplicaRequirements{ResourceRequest: list("cpu", "1"), NodeClaim: &estimatorrpc.NodeClaim{
			NodeSelector: map[string]string{"zone": "a"},
		}},
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if _, err := f.server.MaxAvailableReplicas(ctx, req); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 500 {
			f.pod(fmt.Sprintf("p%d", i), fmt.Sprintf("n%02d", i%50), "cpu", "500m")
			if i%3 == 0 {
				f.nodes.DeletePod(types.UID(fmt.Sprintf("p%d", i-3)))
			}
			if i%7 == 0 {
				label(i%50, []string{"a", "b"}[i%2])
			}
		}
	})
	wg.Wait()

	got, err := f.server.MaxAvailableReplicas(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	fresh := New(f.server.o)
	want, err := fresh.MaxAvailableReplicas(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxReplicas != want.MaxReplicas {
		t.Errorf("after the events: MaxReplicas = %d, a fresh server says %d", got.MaxReplicas, want.MaxReplicas)
	}
}
