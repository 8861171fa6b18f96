package estimate

import (
	"context"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// list builds a ResourceList from name, quantity pairs.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// nodeBuilder builds a Node as the cache keeps it.
type nodeBuilder struct{ n *Node }

// node has allocatable cpu and memory, and room for 110 pods.
func node(name, cpu, memory string) *nodeBuilder {
	return &nodeBuilder{n: &Node{
		Node:        &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}},
		Allocatable: FromList(list("cpu", cpu, "memory", memory, "pods", "110")),
	}}
}

func (b *nodeBuilder) allocatable(pairs ...string) *nodeBuilder {
	b.n.Allocatable = FromList(list(pairs...))
	return b
}

// requested is what the pods bound to the node ask for; pods is how many.
func (b *nodeBuilder) requested(pods int64, pairs ...string) *nodeBuilder {
	b.n.Requested = FromList(list(pairs...))
	b.n.Requested.Pods = pods
	return b
}

func (b *nodeBuilder) label(k, v string) *nodeBuilder {
	b.n.Node.Labels[k] = v
	return b
}

func (b *nodeBuilder) taint(key string, effect corev1.TaintEffect) *nodeBuilder {
	b.n.Node.Spec.Taints = append(b.n.Node.Spec.Taints, corev1.Taint{Key: key, Value: "x", Effect: effect})
	return b
}

func (b *nodeBuilder) cordoned() *nodeBuilder {
	b.n.Node.Spec.Unschedulable = true
	return b
}

func nodes(bs ...*nodeBuilder) []*Node {
	out := make([]*Node, len(bs))
	for i, b := range bs {
		out[i] = b.n
	}
	return out
}

// quota is a ResourceQuota of namespace "ns" with status hard and used
// (name, quantity pairs each).
func quota(hard, used []string, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Scopes: scopes},
		Status:     corev1.ResourceQuotaStatus{Hard: list(hard...), Used: list(used...)},
	}
}

func priorityClassQuota(op corev1.ScopeSelectorOperator, hard, used []string, values ...string) *corev1.ResourceQuota {
	q := quota(hard, used)
	q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
		ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: op, Values: values,
	}}}
	return q
}

func tolerate(key string, effect corev1.TaintEffect) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
}

func replicas(requests corev1.ResourceList, claim *estimatorrpc.NodeClaim) *estimatorrpc.MaxAvailableReplicasRequest {
	return &estimatorrpc.MaxAvailableReplicasRequest{
		Cluster:             "member",
		ReplicaRequirements: estimatorrpc.ReplicaRequirements{NodeClaim: claim, ResourceRequest: requests, Namespace: "ns"},
	}
}

func component(name string, n int32, requests corev1.ResourceList, claim *estimatorrpc.NodeClaim) estimatorrpc.Component {
	return estimatorrpc.Component{Name: name, Replicas: n, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{NodeClaim: claim, ResourceRequest: requests}}
}

func withClass(c estimatorrpc.Component, priorityClass string) estimatorrpc.Component {
	c.ReplicaRequirements.PriorityClassName = priorityClass
	return c
}

func assumedIn(namespace string, cs ...estimatorrpc.Component) estimatorrpc.AssumedWorkload {
	return estimatorrpc.AssumedWorkload{Namespace: namespace, Components: cs}
}

func zoneAffinity(op corev1.NodeSelectorOperator, zones ...string) *estimatorrpc.NodeClaim {
	return &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: op, Values: zones}},
	}}}}
}

// view is one way of reading a cluster in the tables.
type view struct {
	name string
	Cluster
}

// views are the nodes matched node by node, through a fresh MatchCache, and
// through a MatchCache already holding the answer's claims: the answers
// must not differ.
func views(ns []*Node, quotas []*corev1.ResourceQuota) []view {
	warm := NewMatchCache()
	return []view{
		{"matched per node", Cluster{Nodes: ns, Quotas: quotas}},
		{"match cache", Cluster{Nodes: ns, Quotas: quotas, Version: 1, Matches: NewMatchCache()}},
		{"match cache, first answer", Cluster{Nodes: ns, Quotas: quotas, Version: 7, Matches: warm}},
		{"match cache, second answer", Cluster{Nodes: ns, Quotas: quotas, Version: 7, Matches: warm}},
	}
}

func TestMaxReplicas(t *testing.T) {
	oneCPU := list("cpu", "1")
	tests := []struct {
		name   string
		nodes  []*Node
		quotas []*corev1.ResourceQuota
		req    *estimatorrpc.MaxAvailableReplicasRequest
		// edit changes req before the call.
		edit func(*estimatorrpc.MaxAvailableReplicasRequest)
		want int32
	}{
		{
			name:  "fragmentation: 3 nodes with 1.5 CPU free each hold 3 replicas of 1 CPU, not 4",
			nodes: nodes(node("a", "2", "8Gi").requested(1, "cpu", "500m"), node("b", "2", "8Gi").requested(1, "cpu", "500m"), node("c", "2", "8Gi").requested(1, "cpu", "500m")),
			req:   replicas(oneCPU, nil),
			want:  3,
		},
		{
			name:  "every requested resource limits: memory here",
			nodes: nodes(node("a", "8", "3Gi"), node("b", "8", "2500Mi")),
			req:   replicas(list("cpu", "100m", "memory", "1Gi"), nil),
			want:  3 + 2,
		},
		{
			name:  "pod count: a node with 2 pod slots left holds 2 whatever its CPU",
			nodes: nodes(node("a", "64", "64Gi").allocatable("cpu", "64", "memory", "64Gi", "pods", "10").requested(8, "cpu", "1")),
			req:   replicas(oneCPU, nil),
			want:  2,
		},
		{
			name:  "a request of nothing is limited by the pod slots",
			nodes: nodes(node("a", "1", "1Gi").allocatable("pods", "5").requested(1)),
			req:   replicas(nil, nil),
			want:  4,
		},
		{
			name:  "a resource the node does not have: none fit there",
			nodes: nodes(node("a", "8", "8Gi"), node("gpu", "8", "8Gi").allocatable("cpu", "8", "memory", "8Gi", "pods", "110", "nvidia.com/gpu", "4").requested(1, "nvidia.com/gpu", "1")),
			req:   replicas(list("cpu", "1", "nvidia.com/gpu", "1"), nil),
			want:  3,
		},
		{
			name:  "an overcommitted node counts zero, not less",
			nodes: nodes(node("a", "1", "1Gi").requested(2, "cpu", "3"), node("b", "2", "1Gi")),
			req:   replicas(oneCPU, nil),
			want:  2,
		},
		{
			name:  "node selector",
			nodes: nodes(node("a", "4", "8Gi").label("disk", "ssd"), node("b", "4", "8Gi"), node("c", "2", "8Gi").label("disk", "ssd")),
			req:   replicas(oneCPU, &estimatorrpc.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}),
			want:  4 + 2,
		},
		{
			name: "required node affinity",
			nodes: nodes(node("a", "4", "8Gi").label(corev1.LabelTopologyZone, "z1"), node("b", "4", "8Gi").label(corev1.LabelTopologyZone, "z2"),
				node("c", "4", "8Gi").label(corev1.LabelTopologyZone, "z3"), node("d", "4", "8Gi")),
			req:  replicas(oneCPU, zoneAffinity(corev1.NodeSelectorOpIn, "z1", "z3")),
			want: 8,
		},
		{
			name:  "required node affinity on a field: metadata.name",
			nodes: nodes(node("a", "4", "8Gi"), node("b", "2", "8Gi")),
			req: replicas(oneCPU, &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}},
			}}}}),
			want: 2,
		},
		{
			name: "NoSchedule and NoExecute taints keep untolerating replicas away; PreferNoSchedule does not",
			nodes: nodes(node("a", "4", "8Gi").taint("dedicated", corev1.TaintEffectNoSchedule), node("b", "4", "8Gi").taint("evicting", corev1.TaintEffectNoExecute),
				node("c", "2", "8Gi").taint("soft", corev1.TaintEffectPreferNoSchedule)),
			req:  replicas(oneCPU, nil),
			want: 2,
		},
		{
			name:  "tolerated taints",
			nodes: nodes(node("a", "4", "8Gi").taint("dedicated", corev1.TaintEffectNoSchedule), node("b", "4", "8Gi").taint("evicting", corev1.TaintEffectNoExecute)),
			req:   replicas(oneCPU, &estimatorrpc.NodeClaim{Tolerations: []corev1.Toleration{tolerate("dedicated", corev1.TaintEffectNoSchedule)}}),
			want:  4,
		},
		{
			name:  "cordoned nodes are left out",
			nodes: nodes(node("a", "4", "8Gi").cordoned(), node("b", "2", "8Gi")),
			req:   replicas(oneCPU, nil),
			want:  2,
		},
		{
			name:  "cordoned nodes count for replicas tolerating node.kubernetes.io/unschedulable",
			nodes: nodes(node("a", "4", "8Gi").cordoned(), node("b", "2", "8Gi")),
			req:   replicas(oneCPU, &estimatorrpc.NodeClaim{Tolerations: []corev1.Toleration{tolerate(corev1.TaintNodeUnschedulable, "")}}),
			want:  6,
		},
		{
			name: "no nodes",
			req:  replicas(oneCPU, nil),
			want: 0,
		},
		{
			name:   "quota: hard minus used",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.cpu", "4", "limits.cpu", "1"}, []string{"requests.cpu", "1500m", "limits.cpu", "1"})},
			req:    replicas(oneCPU, nil),
			want:   2,
		},
		{
			name:   "quota: bare cpu and memory count as requests; the tightest quota wins",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "10", "memory", "3Gi"}, []string{"cpu", "0", "memory", "0"}), quota([]string{"cpu", "5"}, []string{"cpu", "0"})},
			req:    replicas(list("cpu", "1", "memory", "1Gi"), nil),
			want:   3,
		},
		{
			name:   "quota: pods",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"pods", "10"}, []string{"pods", "7"})},
			req:    replicas(oneCPU, nil),
			want:   3,
		},
		{
			name:   "quota: exhausted",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.cpu", "2"}, []string{"requests.cpu", "3"})},
			req:    replicas(oneCPU, nil),
			want:   0,
		},
		{
			name:   "quota: a resource the replica does not request does not limit it",
			nodes:  nodes(node("a", "4", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.nvidia.com/gpu", "1"}, []string{"requests.nvidia.com/gpu", "1"})},
			req:    replicas(oneCPU, nil),
			want:   4,
		},
		{
			name:   "quota with a PriorityClass scope: counts for a replica of that class",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{priorityClassQuota(corev1.ScopeSelectorOpIn, []string{"cpu", "2"}, []string{"cpu", "0"}, "high")},
			req:    replicas(oneCPU, nil),
			edit:   func(r *estimatorrpc.MaxAvailableReplicasRequest) { r.ReplicaRequirements.PriorityClassName = "high" },
			want:   2,
		},
		{
			name:   "quota with a PriorityClass scope: not for a replica of another class",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{priorityClassQuota(corev1.ScopeSelectorOpIn, []string{"cpu", "2"}, []string{"cpu", "0"}, "high")},
			req:    replicas(oneCPU, nil),
			edit:   func(r *estimatorrpc.MaxAvailableReplicasRequest) { r.ReplicaRequirements.PriorityClassName = "low" },
			want:   16,
		},
		{
			name:   "quota with a PriorityClass Exists scope: not for a replica without a class",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{priorityClassQuota(corev1.ScopeSelectorOpExists, []string{"cpu", "2"}, []string{"cpu", "0"})},
			req:    replicas(oneCPU, nil),
			want:   16,
		},
		{
			name:   "quota with a scope a request cannot tell (BestEffort) is left out",
			nodes:  nodes(node("a", "16", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"pods", "1"}, []string{"pods", "0"}, corev1.ResourceQuotaScopeNotBestEffort)},
			req:    replicas(oneCPU, nil),
			want:   16,
		},
		{
			name:  "assumed workloads take their room first, first-fit",
			nodes: nodes(node("a", "2", "8Gi"), node("b", "2", "8Gi"), node("c", "2", "8Gi")),
			req:   replicas(oneCPU, nil),
			edit: func(r *estimatorrpc.MaxAvailableReplicasRequest) {
				r.AssumedWorkloads = []estimatorrpc.AssumedWorkload{assumedIn("other", component("web", 3, list("cpu", "1500m"), nil))}
			},
			// each node keeps 500m: nothing fits.
			want: 0,
		},
		{
			name:  "assumed workloads go where their own claim allows",
			nodes: nodes(node("a", "4", "8Gi").label("pool", "x"), node("b", "4", "8Gi")),
			req:   replicas(oneCPU, &estimatorrpc.NodeClaim{NodeSelector: map[string]string{"pool": "x"}}),
			edit: func(r *estimatorrpc.MaxAvailableReplicasRequest) {
				r.AssumedWorkloads = []estimatorrpc.AssumedWorkload{
					assumedIn("ns", component("x", 1, list("cpu", "3"), &estimatorrpc.NodeClaim{NodeSelector: map[string]string{"pool": "x"}})),
					assumedIn("ns", component("any", 2, list("cpu", "2"), nil)),
				}
			},
			// x takes 3 of a; "any" finds 1 CPU on a, too little, and takes b.
			want: 1,
		},
		{
			name:  "assumed replicas that fit nowhere take nothing",
			nodes: nodes(node("a", "4", "8Gi")),
			req:   replicas(oneCPU, nil),
			edit: func(r *estimatorrpc.MaxAvailableReplicasRequest) {
				r.AssumedWorkloads = []estimatorrpc.AssumedWorkload{assumedIn("ns", component("big", 5, list("cpu", "8"), nil))}
			},
			want: 4,
		},
		{
			name:   "assumed workloads of the namespace take quota; others do not",
			nodes:  nodes(node("a", "64", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.cpu", "10"}, []string{"requests.cpu", "2"})},
			req:    replicas(oneCPU, nil),
			edit: func(r *estimatorrpc.MaxAvailableReplicasRequest) {
				r.AssumedWorkloads = []estimatorrpc.AssumedWorkload{
					assumedIn("ns", component("mine", 3, list("cpu", "1"), nil)),
					assumedIn("other", component("theirs", 50, list("cpu", "1"), nil)),
				}
			},
			// quota: 10-2-3 = 5; nodes: 64-3-50 = 11.
			want: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.edit != nil {
				tt.edit(tt.req)
			}
			for _, parallelism := range []int{1, 4} {
				for _, c := range views(tt.nodes, tt.quotas) {
					got, err := MaxReplicas(context.Background(), c.Cluster, tt.req, parallelism)
					if err != nil {
						t.Fatal(err)
					}
					if got != tt.want {
						t.Errorf("parallelism %d, %s: MaxReplicas = %d, want %d", parallelism, c.name, got, tt.want)
					}
				}
			}
		})
	}
}

// TestMaxReplicasManyNodes: the parallel count adds up every chunk.
func TestMaxReplicasManyNodes(t *testing.T) {
	bs := make([]*nodeBuilder, 0, 1000)
	for i := range 1000 {
		bs = append(bs, node("n"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "3", "8Gi"))
	}
	got, err := MaxReplicas(context.Background(), Cluster{Nodes: nodes(bs...)}, replicas(list("cpu", "1"), nil), 8)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3000 {
		t.Errorf("MaxReplicas = %d, want 3000", got)
	}
}

func TestMaxReplicasInvalid(t *testing.T) {
	tests := []struct {
		name string
		req  *estimatorrpc.MaxAvailableReplicasRequest
		want string
	}{
		{
			name: "negative request",
			req:  replicas(list("cpu", "-1"), nil),
			want: "replicaRequirements.resourceRequest[cpu]",
		},
		{
			name: "bad node affinity operator",
			req:  replicas(nil, zoneAffinity("Near", "z1")),
			want: "replicaRequirements.nodeClaim.nodeAffinity.nodeSelectorTerms[0].matchExpressions[0].operator",
		},
		{
			name: "bad node affinity field",
			req: replicas(nil, &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
			}}}}),
			want: "replicaRequirements.nodeClaim.nodeAffinity.nodeSelectorTerms[0].matchFields[0].values",
		},
		{
			name: "negative assumed replicas",
			req: func() *estimatorrpc.MaxAvailableReplicasRequest {
				r := replicas(nil, nil)
				r.AssumedWorkloads = []estimatorrpc.AssumedWorkload{assumedIn("ns"), assumedIn("ns", component("a", 1, nil, nil), component("b", -1, nil, nil))}
				return r
			}(),
			want: "assumedWorkloads[1].components[1].replicas",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MaxReplicas(context.Background(), Cluster{Nodes: nodes(node("a", "1", "1Gi"))}, tt.req, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

func TestMaxSets(t *testing.T) {
	gpu := &estimatorrpc.NodeClaim{NodeSelector: map[string]string{"accelerator": "gpu"}}
	noGPU := &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "accelerator", Operator: corev1.NodeSelectorOpDoesNotExist}},
	}}}}
	tests := []struct {
		name       string
		nodes      []*Node
		quotas     []*corev1.ResourceQuota
		components []estimatorrpc.Component
		assumed    []estimatorrpc.AssumedWorkload
		want       int32
	}{
		{
			name:  "packing: 3 nodes of 3 CPU hold three 2-CPU pods, so one set of two, where per-component sums say 3",
			nodes: nodes(node("a", "3", "8Gi"), node("b", "3", "8Gi"), node("c", "3", "8Gi")),
			components: []estimatorrpc.Component{
				component("jobmanager", 1, list("cpu", "2"), nil),
				component("taskmanager", 1, list("cpu", "2"), nil),
			},
			want: 1,
		},
		{
			name:  "replicas of a component count per set",
			nodes: nodes(node("a", "4", "8Gi"), node("b", "4", "8Gi"), node("c", "4", "8Gi")),
			components: []estimatorrpc.Component{
				component("jobmanager", 1, list("cpu", "1"), nil),
				component("taskmanager", 2, list("cpu", "2"), nil),
			},
			// set 1: jm a, tm a, tm b; set 2: jm a, tm b, tm c; set 3: jm c, no room for a tm.
			want: 2,
		},
		{
			name:  "each component's own node claim",
			nodes: nodes(node("a", "8", "8Gi").label("accelerator", "gpu"), node("b", "8", "8Gi"), node("c", "8", "8Gi")),
			components: []estimatorrpc.Component{
				component("driver", 1, list("cpu", "1"), noGPU),
				component("trainer", 1, list("cpu", "4"), gpu),
			},
			// trainers fit a only, twice; drivers have b and c.
			want: 2,
		},
		{
			name:  "pod slots limit sets",
			nodes: nodes(node("a", "64", "64Gi").allocatable("cpu", "64", "memory", "64Gi", "pods", "7")),
			components: []estimatorrpc.Component{
				component("a", 1, list("cpu", "100m"), nil),
				component("b", 2, list("cpu", "100m"), nil),
			},
			want: 2,
		},
		{
			name:  "zero-replica components take nothing",
			nodes: nodes(node("a", "4", "8Gi")),
			components: []estimatorrpc.Component{
				component("a", 1, list("cpu", "1"), nil),
				component("unused", 0, list("cpu", "100"), nil),
			},
			want: 4,
		},
		{
			name:   "quota limits sets: each set takes the sum of its components",
			nodes:  nodes(node("a", "64", "64Gi")),
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.cpu", "10"}, []string{"requests.cpu", "1"})},
			components: []estimatorrpc.Component{
				component("a", 1, list("cpu", "1"), nil),
				component("b", 2, list("cpu", "1"), nil),
			},
			want: 3,
		},
		{
			name:   "a PriorityClass-scoped quota counts the components of that class only",
			nodes:  nodes(node("a", "64", "64Gi")),
			quotas: []*corev1.ResourceQuota{priorityClassQuota(corev1.ScopeSelectorOpIn, []string{"requests.cpu", "4"}, []string{"requests.cpu", "0"}, "high")},
			components: []estimatorrpc.Component{
				withClass(component("leader", 1, list("cpu", "1"), nil), "high"),
				component("workers", 2, list("cpu", "1"), nil),
			},
			want: 4,
		},
		{
			name:  "assumed workloads are placed first",
			nodes: nodes(node("a", "4", "8Gi"), node("b", "4", "8Gi")),
			components: []estimatorrpc.Component{
				component("a", 2, list("cpu", "1"), nil),
			},
			assumed: []estimatorrpc.AssumedWorkload{assumedIn("ns", component("x", 2, list("cpu", "3"), nil))},
			// a and b keep 1 CPU each: one set of two.
			want: 1,
		},
		{
			name:  "nothing fits",
			nodes: nodes(node("a", "1", "8Gi")),
			components: []estimatorrpc.Component{
				component("a", 1, list("cpu", "2"), nil),
			},
			want: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &estimatorrpc.MaxAvailableComponentSetsRequest{Cluster: "member", Namespace: "ns", Components: tt.components, AssumedWorkloads: tt.assumed}
			for _, c := range views(tt.nodes, tt.quotas) {
				got, err := MaxSets(context.Background(), c.Cluster, req)
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("%s: MaxSets = %d, want %d", c.name, got, tt.want)
				}
			}
		})
	}
}

func TestMaxSetsEdges(t *testing.T) {
	ns := Cluster{Nodes: nodes(node("a", "4", "8Gi"))}
	if _, err := MaxSets(context.Background(), ns, &estimatorrpc.MaxAvailableComponentSetsRequest{}); err == nil || !strings.Contains(err.Error(), "components") {
		t.Errorf("no components: error = %v, want one naming components", err)
	}
	_, err := MaxSets(context.Background(), ns, &estimatorrpc.MaxAvailableComponentSetsRequest{Components: []estimatorrpc.Component{component("a", -2, nil, nil)}})
	if err == nil || !strings.Contains(err.Error(), "components[0].replicas") {
		t.Errorf("negative replicas: error = %v, want one naming components[0].replicas", err)
	}
	got, err := MaxSets(context.Background(), ns, &estimatorrpc.MaxAvailableComponentSetsRequest{Components: []estimatorrpc.Component{component("a", 0, list("cpu", "1"), nil)}})
	if err != nil || got != math.MaxInt32 {
		t.Errorf("only empty components: MaxSets = %d, %v; want MaxInt32", got, err)
	}
}

func TestResources(t *testing.T) {
	r := FromList(list("cpu", "1500m", "memory", "1Gi", "nvidia.com/gpu", "2", "hugepages-2Mi", "4Mi"))
	if r.MilliCPU != 1500 || r.Memory != 1<<30 || r.Scalar["nvidia.com/gpu"] != 2 || r.Get("hugepages-2Mi") != 4<<20 {
		t.Fatalf("FromList = %+v", r)
	}
	var sum Resources
	sum.Add(r)
	sum.Add(r)
	sum.Sub(r)
	if !sum.Equal(r) {
		t.Errorf("r + r - r = %+v, want %+v", sum, r)
	}
	sum.Sub(r)
	if !sum.IsZero() {
		t.Errorf("r - r = %+v, want nothing left (no zero scalars kept)", sum)
	}
}

// TestMatchCacheVersion: a new Version of the nodes is matched afresh;
// the same Version answers from what was matched.
func TestMatchCacheVersion(t *testing.T) {
	mc := NewMatchCache()
	ns := nodes(node("a", "4", "8Gi").label("pool", "x"), node("b", "4", "8Gi"))
	req := replicas(list("cpu", "1"), &estimatorrpc.NodeClaim{NodeSelector: map[string]string{"pool": "x"}})
	ask := func(version uint64, ns []*Node) int32 {
		t.Helper()
		got, err := MaxReplicas(context.Background(), Cluster{Nodes: ns, Version: version, Matches: mc}, req, 1)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := ask(1, ns); got != 4 {
		t.Fatalf("MaxReplicas = %d, want 4", got)
	}
	ns[1].Node.Labels["pool"] = "x"
	if got := ask(1, ns); got != 4 {
		t.Errorf("same version: MaxReplicas = %d, want 4 from the cache (the cache knows versions, not labels)", got)
	}
	if got := ask(2, ns); got != 8 {
		t.Errorf("new version: MaxReplicas = %d, want 8", got)
	}
	more := append(ns, node("c", "4", "8Gi").label("pool", "x").n)
	if got := ask(2, more); got != 12 {
		t.Errorf("more nodes than matched: MaxReplicas = %d, want 12", got)
	}
}
