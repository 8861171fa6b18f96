package cache

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/estimate"
)

func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func node(name string, allocatable ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: list(allocatable...)}}
}

func pod(uid, nodeName string, requests ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid)},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: list(requests...)}}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// state is what the cache holds, by node name: requested cpu (milli) and
// pod count, and whether the node is known.
type state map[string]string

func snapshot(c *Cache) state {
	out := state{}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for name, e := range c.byName {
		out[name] = fmt.Sprintf("known=%v cpu=%d pods=%d", e.known, e.node.Requested.MilliCPU, e.node.Requested.Pods)
	}
	return out
}

func TestEvents(t *testing.T) {
	terminated := pod("p1", "a", "cpu", "1")
	terminated.Status.Phase = corev1.PodSucceeded
	resized := pod("p1", "a", "cpu", "3")
	initContainers := pod("p3", "b", "cpu", "1")
	initContainers.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("cpu", "4")}}}

	tests := []struct {
		name  string
		apply func(c *Cache, nodes, pods toolscache.ResourceEventHandler)
		want  state
	}{
		{
			name: "pods add up on their node",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				nodes.OnAdd(node("a", "cpu", "4"), false)
				pods.OnAdd(pod("p1", "a", "cpu", "1"), false)
				pods.OnAdd(pod("p2", "a", "cpu", "500m"), false)
				pods.OnAdd(pod("pending", "", "cpu", "2"), false)
			},
			want: state{"a": "known=true cpu=1500 pods=2"},
		},
		{
			name: "a pod bound later is counted then",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				nodes.OnAdd(node("a", "cpu", "4"), false)
				pods.OnAdd(pod("p1", "", "cpu", "1"), false)
				pods.OnUpdate(pod("p1", "", "cpu", "1"), pod("p1", "a", "cpu", "1"))
			},
			want: state{"a": "known=true cpu=1000 pods=1"},
		},
		{
			name: "an update replaces what the pod counted",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				nodes.OnAdd(node("a", "cpu", "4"), false)
				pods.OnAdd(pod("p1", "a", "cpu", "1"), false)
				pods.OnUpdate(pod("p1", "a", "cpu", "1"), resized)
				pods.OnUpdate(resized, resized)
			},
			want: state{"a": "known=true cpu=3000 pods=1"},
		},
		{
			name: "terminated and deleted pods stop counting, tombstones included",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				nodes.OnAdd(node("a", "cpu", "4"), false)
				pods.OnAdd(pod("p1", "a", "cpu", "1"), false)
				pods.OnAdd(pod("p2", "a", "cpu", "1"), false)
				pods.OnUpdate(pod("p1", "a", "cpu", "1"), terminated)
				pods.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/p2", Obj: pod("p2", "a", "cpu", "1")})
			},
			want: state{"a": "known=true cpu=0 pods=0"},
		},
		{
			name: "pods before their node; node gone while pods remain; pods gone after",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				pods.OnAdd(pod("p1", "b", "cpu", "1"), false)
				pods.OnAdd(initContainers, false)
				nodes.OnAdd(node("b", "cpu", "8"), false)
				nodes.OnAdd(node("c", "cpu", "8"), false)
				nodes.OnDelete(node("c"))
				pods.OnAdd(pod("p9", "gone", "cpu", "1"), false)
				pods.OnDelete(pod("p9", "gone", "cpu", "1"))
			},
			// p3 counts its init container's 4 CPU, the peak of its steps.
			want: state{"b": "known=true cpu=5000 pods=2"},
		},
		{
			name: "a node deleted with pods on it keeps them until they go",
			apply: func(c *Cache, nodes, pods toolscache.ResourceEventHandler) {
				nodes.OnAdd(node("a", "cpu", "4"), false)
				pods.OnAdd(pod("p1", "a", "cpu", "1"), false)
				nodes.OnDelete(node("a"))
			},
			want: state{"a": "known=false cpu=1000 pods=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			tt.apply(c, c.NodeHandler(), c.PodHandler())
			if diff := cmp.Diff(tt.want, snapshot(c)); diff != "" {
				t.Errorf("cache (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadSorted: answers walk the known nodes by name, whatever order
// they came in.
func TestReadSorted(t *testing.T) {
	c := New()
	for _, name := range []string{"m", "c", "x", "a", "q"} {
		c.SetNode(node(name, "cpu", "1"))
	}
	c.DeleteNode("x")
	c.SetNode(node("c", "cpu", "2"))
	var got []string
	c.Read(func(nodes []*estimate.Node, _ uint64) {
		for _, n := range nodes {
			got = append(got, fmt.Sprintf("%s:%d", n.Node.Name, n.Allocatable.MilliCPU))
		}
	})
	if diff := cmp.Diff([]string{"a:1000", "c:2000", "m:1000", "q:1000"}, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}

// TestTransformPod: the slim pod counts the same requests as the pod.
func TestTransformPod(t *testing.T) {
	p := pod("p1", "a", "cpu", "1", "memory", "1Gi")
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("cpu", "2")}}}
	p.Spec.Overhead = list("cpu", "100m")
	p.OwnerReferences = []metav1.OwnerReference{{UID: "other"}, {UID: "rs", Controller: new(true)}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	obj, err := TransformPod(p)
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*corev1.Pod)
	full, small := New(), New()
	full.SetPod(p)
	small.SetPod(slim)
	if diff := cmp.Diff(snapshot(full), snapshot(small)); diff != "" {
		t.Errorf("slim pod counts differently (-full +slim):\n%s", diff)
	}
	if got := snapshot(small)["a"]; got != "known=false cpu=2100 pods=1" {
		t.Errorf("counted %s, want cpu=2100 (init peak and overhead)", got)
	}
	if len(slim.OwnerReferences) != 1 || slim.OwnerReferences[0].UID != "rs" {
		t.Errorf("owner references = %v, want the controller only", slim.OwnerReferences)
	}
	if len(slim.Status.Conditions) != 1 || slim.Status.Conditions[0].Type != corev1.PodScheduled {
		t.Errorf("conditions = %v, want PodScheduled only", slim.Status.Conditions)
	}
}

// TestVersion: the version moves with what node claims match, not with
// resources or pods.
func TestVersion(t *testing.T) {
	c := New()
	version := func() uint64 {
		var v uint64
		c.Read(func(_ []*estimate.Node, version uint64) { v = version })
		return v
	}
	steps := []struct {
		name  string
		apply func()
		moves bool
	}{
		{"a node comes", func() { c.SetNode(node("a", "cpu", "4")) }, true},
		{"its allocatable changes", func() { c.SetNode(node("a", "cpu", "8")) }, false},
		{"a pod binds", func() { c.SetPod(pod("p", "a", "cpu", "1")) }, false},
		{"it is labelled", func() {
			n := node("a", "cpu", "8")
			n.Labels = map[string]string{"zone": "z1"}
			c.SetNode(n)
		}, true},
		{"it is tainted", func() {
			n := node("a", "cpu", "8")
			n.Labels = map[string]string{"zone": "z1"}
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			c.SetNode(n)
		}, true},
		{"it is cordoned", func() {
			n := node("a", "cpu", "8")
			n.Labels = map[string]string{"zone": "z1"}
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			n.Spec.Unschedulable = true
			c.SetNode(n)
		}, true},
		{"it goes", func() { c.DeleteNode("a") }, true},
		{"an unknown node goes", func() { c.DeleteNode("zz") }, false},
	}
	for _, s := range steps {
		before := version()
		s.apply()
		if moved := version() != before; moved != s.moves {
			t.Errorf("%s: version moved %v, want %v", s.name, moved, s.moves)
		}
	}
}
