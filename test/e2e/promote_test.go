package e2e

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/promote"
)

// TestPromoteKeepsPods promotes a Deployment that runs in member1 only,
// read through the control plane's cluster proxy: the control plane takes
// it over (labels it managed, aggregates its status) and its pods are the
// ones that ran before.
func TestPromoteKeepsPods(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := member(t, "member1")
	const ns, name = "e2e-promote", "legacy"
	if err := m.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cp.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		_ = m.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	labels := map[string]string{"app": name}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
	if err := m.Client.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	runningPods := func(ctx context.Context) ([]types.UID, error) {
		var pods corev1.PodList
		if err := m.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return nil, err
		}
		var uids []types.UID
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				uids = append(uids, p.UID)
			}
		}
		slices.Sort(uids)
		return uids, nil
	}
	var before []types.UID
	eventually(t, "the member's own Deployment running", func(ctx context.Context) (bool, error) {
		uids, err := runningPods(ctx)
		before = uids
		return len(uids) == 2, err
	})

	proxy := rest.CopyConfig(fed.ControlPlane.Config)
	proxy.Host += "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"
	viaProxy, err := client.New(proxy, client.Options{Scheme: cp.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := promote.Promote(ctx, cp, viaProxy, promote.Options{
		Cluster: "member1", GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: ns, Name: name,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Policy == nil {
		t.Fatal("no policy created")
	}

	eventually(t, "member1's Deployment taken over", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(deploy), &got); err != nil {
			return false, err
		}
		return got.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue, nil
	})
	eventually(t, "the template's status aggregated", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := cp.Get(ctx, client.ObjectKeyFromObject(deploy), &got); err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 2, nil
	})
	after, err := runningPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Errorf("pods changed: before %v, after %v", before, after)
	}
	var sets appsv1.ReplicaSetList
	if err := m.Client.List(ctx, &sets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(sets.Items) != 1 {
		t.Errorf("%d ReplicaSets, want the one from before the promotion", len(sets.Items))
	}
	// Nothing of it reached the other members.
	for _, other := range []string{"member2", "member3"} {
		err := member(t, other).Client.Get(ctx, client.ObjectKeyFromObject(deploy), &appsv1.Deployment{})
		if client.IgnoreNotFound(err) != nil || err == nil {
			t.Errorf("%s: %v, want the Deployment absent", other, err)
		}
	}
}
