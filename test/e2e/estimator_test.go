package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

// dedicatedNode adds to member m a kwok node of cpu CPUs that only the
// scenario's pods use: it carries the label key=value that they select and a
// NoSchedule taint that keeps every other scenario's pods off it. It is
// removed at the end.
func dedicatedNode(t *testing.T, m, name, key, value, cpu string, address int) *corev1.Node {
	t.Helper()
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", key: value},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources,
			// 198.19.0.0/16, of the benchmarking range: nothing dials it,
			// as no log or exec of this node's pods is asked for (the
			// federation's own nodes are kwok's, at 127.0.0.1).
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("198.19.0.%d", address)}, {Type: corev1.NodeHostName, Address: name}},
		},
	}
	mc := member(t, m).Client
	if err := mc.Create(t.Context(), node); err != nil {
		t.Fatalf("creating node %s in %s: %v", name, m, err)
	}
	t.Cleanup(func() { _ = mc.Delete(context.Background(), node) })
	eventually(t, "node "+name+" Ready in "+m, func(ctx context.Context) (bool, error) {
		var got corev1.Node
		if err := mc.Get(ctx, client.ObjectKeyFromObject(node), &got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	return node
}

// placement reads the binding's spec.clusters once it is scheduled.
func placement(ctx context.Context, key client.ObjectKey) (map[string]int32, error) {
	var rb workv1alpha2.ResourceBinding
	if err := cp.Get(ctx, key, &rb); err != nil {
		return nil, err
	}
	if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
		return nil, nil
	}
	return targetReplicas(rb.Spec.Clusters), nil
}

// TestEstimatorsPlaceAndDeschedulerMoves: a Deployment divided by dynamic
// weight whose pods fit only on one node per member — 8 CPUs in member1, 2
// in member2 — is divided 3:1 as the members' estimators count the nodes its
// pods may use; the Cluster summaries, which count every node, would have
// divided it evenly. Then member2's node is cordoned and its pod deleted:
// the new pod cannot be scheduled there, the descheduler takes that replica
// off member2 and the scheduler puts it on member1, which runs all four.
// No replica is lost or doubled on the way.
func TestEstimatorsPlaceAndDeschedulerMoves(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-estimator")
	const (
		key            = "e2e.flotilla.io/estimator"
		replicas int32 = 4
	)
	dedicatedNode(t, "member1", "e2e-estimator-member1", key, ns, "8", 1)
	small := dedicatedNode(t, "member2", "e2e-estimator-member2", key, ns, "2", 2)

	pp := propagationPolicy(ns, "web", []string{"member1", "member2"}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})
	pp.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}
	create(t, pp)
	d := deployment(ns, "web", replicas, "registry.example/web:1")
	pod := &d.Spec.Template.Spec
	pod.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	pod.NodeSelector = map[string]string{key: ns}
	pod.Tolerations = []corev1.Toleration{{Key: key, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	create(t, d)
	rbKey := client.ObjectKey{Namespace: ns, Name: names.Binding(d.Name, "Deployment")}

	// Weights 8:2 give 3.2 and 0.8 replicas; the remainder goes to the
	// larger fraction.
	byEstimators := map[string]int32{"member1": 3, "member2": 1}
	eventually(t, "web divided 3:1 as the estimators count", func(ctx context.Context) (bool, error) {
		got, err := placement(ctx, rbKey)
		if err != nil || got == nil {
			return false, err
		}
		if !maps.Equal(got, byEstimators) {
			return false, fmt.Errorf("placed %v, want %v", got, byEstimators)
		}
		return true, nil
	})
	availableIn(t, client.ObjectKeyFromObject(d), byEstimators)

	// member2's node takes no more pods; its running pod is deleted and the
	// one replacing it stays Pending, unschedulable.
	m2 := member(t, "member2").Client
	cordon := client.MergeFrom(small.DeepCopy())
	small.Spec.Unschedulable = true
	if err := m2.Patch(t.Context(), small, cordon); err != nil {
		t.Fatalf("cordoning %s: %v", small.Name, err)
	}
	if err := m2.DeleteAllOf(t.Context(), &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"app": d.Name}); err != nil {
		t.Fatalf("deleting web's pods in member2: %v", err)
	}

	moved := map[string]int32{"member1": 4}
	eventually(t, "member2's replica descheduled and placed on member1", func(ctx context.Context) (bool, error) {
		got, err := placement(ctx, rbKey)
		if err != nil || got == nil {
			return false, err
		}
		if got["member2"] == 0 {
			delete(got, "member2")
		}
		return maps.Equal(got, moved), nil
	})
	availableIn(t, client.ObjectKeyFromObject(d), moved)

	eventually(t, "the DescheduleBindingSucceed event on the binding", func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := cp.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == events.ReasonDescheduleBindingSucceed && e.Regarding.Kind == "ResourceBinding" && e.Regarding.Name == rbKey.Name {
				return true, nil
			}
		}
		return false, nil
	})

	// The Deployment in member2, if the binding kept it at zero, runs no
	// pod; member1 runs exactly four.
	var pods corev1.PodList
	if err := member(t, "member1").Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": d.Name}); err != nil {
		t.Fatal(err)
	}
	if n := len(pods.Items); n != int(replicas) {
		t.Errorf("member1 has %d pods of web, want %d", n, replicas)
	}
	var left appsv1.Deployment
	if err := m2.Get(t.Context(), client.ObjectKeyFromObject(d), &left); err == nil && *left.Spec.Replicas != 0 {
		t.Errorf("member2 still runs web with %d replicas", *left.Spec.Replicas)
	}
}
