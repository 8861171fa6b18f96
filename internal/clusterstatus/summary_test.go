package clusterstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// list builds a ResourceList from name/quantity pairs.
func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func container(kv ...string) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: list(kv...)}}
}

func sidecar(kv ...string) corev1.Container {
	c := container(kv...)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func on(node string) podOpt                    { return func(p *corev1.Pod) { p.Spec.NodeName = node } }
func phase(ph corev1.PodPhase) podOpt          { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func containers(cs ...corev1.Container) podOpt { return func(p *corev1.Pod) { p.Spec.Containers = cs } }
func inits(cs ...corev1.Container) podOpt      { return func(p *corev1.Pod) { p.Spec.InitContainers = cs } }
func overhead(l corev1.ResourceList) podOpt    { return func(p *corev1.Pod) { p.Spec.Overhead = l } }
func podLevel(l corev1.ResourceList) podOpt {
	return func(p *corev1.Pod) { p.Spec.Resources = &corev1.ResourceRequirements{Requests: l} }
}
func node(name string, ready bool, alloc corev1.ResourceList) *corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: alloc,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		},
	}
}

// equalLists compares ResourceLists by value, whatever the quantities'
// formats.
func equalLists(t *testing.T, what string, want, got corev1.ResourceList) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for name, q := range want {
		g, ok := got[name]
		if !ok || g.Cmp(q) != 0 {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

func TestNodeSummary(t *testing.T) {
	got := nodeSummary([]*corev1.Node{
		node("a", true, nil),
		node("b", false, nil),
		{ObjectMeta: metav1.ObjectMeta{Name: "no-conditions"}},
		node("c", true, nil),
	})
	if want := (&clusterv1alpha1.NodeSummary{TotalNum: 4, ReadyNum: 2}); !cmp.Equal(want, got) {
		t.Errorf("nodeSummary = %+v, want %+v", got, want)
	}
}

func TestResourceSummary(t *testing.T) {
	nodes := []*corev1.Node{
		node("a", true, list("cpu", "8", "memory", "32Gi", "pods", "110")),
		// Not-ready nodes count too, as in Karmada.
		node("b", false, list("cpu", "4", "memory", "16Gi", "pods", "110", "nvidia.com/gpu", "1")),
	}
	pods := []*corev1.Pod{
		pod("running", on("a"), containers(container("cpu", "1", "memory", "1Gi"))),
		// Counted with its effective requests: app 100m + sidecar 200m +
		// overhead 50m; memory from the pod-level request.
		pod("with-sidecar", on("a"), containers(container("cpu", "100m")), inits(sidecar("cpu", "200m")),
			podLevel(list("memory", "512Mi")), overhead(list("cpu", "50m"))),
		pod("pending-bound", on("b"), phase(corev1.PodPending), containers(container("cpu", "500m", "nvidia.com/gpu", "1"))),
		pod("done", on("a"), phase(corev1.PodSucceeded), containers(container("cpu", "4"))),
		pod("failed", on("a"), phase(corev1.PodFailed), containers(container("cpu", "4"))),
		pod("unscheduled", phase(corev1.PodPending), containers(container("cpu", "2", "memory", "3Gi"))),
		pod("unscheduled-2", phase(corev1.PodPending), containers(container("memory", "1Gi"))),
		// Unbound but no longer pending: neither allocated nor allocating.
		pod("odd", phase(corev1.PodFailed), containers(container("cpu", "9"))),
	}
	got := resourceSummary(nil, nodes, pods)
	equalLists(t, "allocatable", list("cpu", "12", "memory", "48Gi", "pods", "220", "nvidia.com/gpu", "1"), got.Allocatable)
	equalLists(t, "allocated", list("cpu", "1850m", "memory", "1536Mi", "ephemeral-storage", "0", "pods", "3", "nvidia.com/gpu", "1"), got.Allocated)
	equalLists(t, "allocating", list("cpu", "2", "memory", "4Gi", "ephemeral-storage", "0", "pods", "2"), got.Allocating)
	if got.AllocatableModelings != nil {
		t.Errorf("allocatableModelings without models = %v", got.AllocatableModelings)
	}

	empty := resourceSummary(nil, nil, nil)
	equalLists(t, "allocated of an empty member", list("cpu", "0", "memory", "0", "ephemeral-storage", "0", "pods", "0"), empty.Allocated)
}

func TestAllocatableModelings(t *testing.T) {
	rng := func(name, lo, hi string) clusterv1alpha1.ResourceModelRange {
		return clusterv1alpha1.ResourceModelRange{Name: corev1.ResourceName(name), Min: resource.MustParse(lo), Max: resource.MustParse(hi)}
	}
	models := []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "0", "1"), rng("memory", "0", "4Gi")}},
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "1", "2"), rng("memory", "4Gi", "16Gi")}},
		{Grade: 2, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "2", "100"), rng("memory", "16Gi", "1Ti")}},
	}
	nodes := []*corev1.Node{
		// 8 cpu, 32Gi free: grade 2.
		node("big", true, list("cpu", "8", "memory", "32Gi")),
		// 8 cpu but 6 used: 2 free → grade 2 by cpu, 32Gi-24Gi=8Gi → grade 1 by memory: grade 1.
		node("busy", true, list("cpu", "8", "memory", "32Gi")),
		// Overcommitted: free clamps at zero → grade 0.
		node("full", true, list("cpu", "1", "memory", "1Gi")),
		// No memory reported: counts as zero → grade 0.
		node("odd", true, list("cpu", "4")),
	}
	pods := []*corev1.Pod{
		pod("p1", on("busy"), containers(container("cpu", "6", "memory", "24Gi"))),
		pod("p2", on("full"), containers(container("cpu", "2", "memory", "2Gi"))),
		// Terminated and unscheduled pods free nothing up.
		pod("p3", on("big"), phase(corev1.PodSucceeded), containers(container("cpu", "8"))),
		pod("p4", phase(corev1.PodPending), containers(container("cpu", "8"))),
	}
	got := allocatableModelings(models, nodes, pods)
	want := []clusterv1alpha1.AllocatableModeling{{Grade: 0, Count: 2}, {Grade: 1, Count: 1}, {Grade: 2, Count: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocatableModelings (-want +got):\n%s", diff)
	}
}
