package app_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// One Pull member, its agent running with a short lease, and no
// controller-manager: what happens here is the agent's doing.
var fed = &localfedtest.Shared{Options: localfed.Options{
	PullMembers:  1,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
	AgentArgs:    []string{"--cluster-lease-duration=4s", "--cluster-status-update-frequency=1s"},
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

func controlPlane(t *testing.T) (*localfed.Federation, client.Client) {
	t.Helper()
	f := fed.Get(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme, workv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestRegistersReportsAndRenews(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	var kubeSystem corev1.Namespace
	if err := member.Client.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}

	controllertest.WaitFor(t, "Cluster registered in Pull mode, Ready, with its status", func(ctx context.Context) (bool, error) {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, &c); err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return c.Spec.SyncMode == clusterv1alpha1.Pull && c.Spec.ID == string(kubeSystem.UID) && c.Spec.APIEndpoint == member.Endpoint &&
			ready != nil && ready.Status == metav1.ConditionTrue && ready.Reason == clusterv1alpha1.ClusterReasonReady &&
			c.Status.KubernetesVersion != "" && c.Status.NodeSummary != nil && c.Status.NodeSummary.TotalNum == 1, nil
	})

	var first time.Time
	controllertest.WaitFor(t, "lease renewed", func(ctx context.Context) (bool, error) {
		var l coordinationv1.Lease
		err := cp.Get(ctx, client.ObjectKey{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: member.Name}, &l)
		if apierrors.IsNotFound(err) || (err == nil && l.Spec.RenewTime == nil) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != member.Name || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Cluster" {
			t.Fatalf("lease = %+v, want held by %s and owned by its Cluster", l, member.Name)
		}
		if first.IsZero() {
			first = l.Spec.RenewTime.Time
			return false, nil
		}
		return l.Spec.RenewTime.After(first), nil
	})
}

func configMapWork(t *testing.T, ns, name string, data map[string]string) *workv1alpha1.Work {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": name},
		"data":     data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
}

// TestAppliesReflectsAndRemovesWorks: a Work of the execution namespace
// reaches the member, reports Applied and the member object's status entry,
// follows a change of its manifest, and takes the object with it when
// deleted; all with the agent's own, per-cluster, rights.
func TestAppliesReflectsAndRemovesWorks(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	es := names.ExecutionSpace(member.Name)
	work := configMapWork(t, es, "agent-applies", map[string]string{"k": "v1"})
	if err := cp.Create(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "default", Name: work.Name}
	memberValue := func(ctx context.Context) (string, bool, error) {
		var cm corev1.ConfigMap
		err := member.Client.Get(ctx, key, &cm)
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return cm.Data["k"], cm.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue, nil
	}

	controllertest.WaitFor(t, "ConfigMap in the member, Work Applied with its status entry", func(ctx context.Context) (bool, error) {
		v, managed, err := memberValue(ctx)
		if err != nil || v != "v1" || !managed {
			return false, err
		}
		var w workv1alpha1.Work
		if err := cp.Get(ctx, client.ObjectKeyFromObject(work), &w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) && len(w.Status.ManifestStatuses) == 1, nil
	})

	updated := configMapWork(t, es, work.Name, map[string]string{"k": "v2"})
	if err := cp.Get(t.Context(), client.ObjectKeyFromObject(work), work); err != nil {
		t.Fatal(err)
	}
	work.Spec = updated.Spec
	if err := cp.Update(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "member ConfigMap updated", func(ctx context.Context) (bool, error) {
		v, _, err := memberValue(ctx)
		return v == "v2", err
	})

	if err := cp.Delete(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "member ConfigMap and Work gone", func(ctx context.Context) (bool, error) {
		var cm corev1.ConfigMap
		if err := member.Client.Get(ctx, key, &cm); !apierrors.IsNotFound(err) {
			return false, client.IgnoreNotFound(err)
		}
		err := cp.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
