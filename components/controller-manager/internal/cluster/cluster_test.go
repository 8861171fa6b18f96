package cluster_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/names"
)

// fast probes often and flips after two failed probes, to keep tests short.
var fast = cluster.HealthOptions{Period: 500 * time.Millisecond, Timeout: 2 * time.Second, FailureThreshold: 2, SuccessThreshold: 1}

func getCluster(ctx context.Context, c client.Client, name string) (*clusterv1alpha1.Cluster, error) {
	var obj clusterv1alpha1.Cluster
	err := c.Get(ctx, client.ObjectKey{Name: name}, &obj)
	return &obj, err
}

// readyIs waits until the Cluster's Ready condition has status and reason.
func readyIs(t *testing.T, c client.Client, name string, status metav1.ConditionStatus, reason string) *clusterv1alpha1.Cluster {
	t.Helper()
	var got *clusterv1alpha1.Cluster
	waitFor(t, name+" Ready="+string(status), func(ctx context.Context) (bool, error) {
		obj, err := getCluster(ctx, c, name)
		if err != nil {
			return false, err
		}
		got = obj
		cond := meta.FindStatusCondition(obj.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return cond != nil && cond.Status == status && cond.Reason == reason, nil
	})
	return got
}

func taintKeys(c *clusterv1alpha1.Cluster) []string {
	keys := make([]string, 0, len(c.Spec.Taints))
	for _, t := range c.Spec.Taints {
		keys = append(keys, t.Key+":"+string(t.Effect))
	}
	return keys
}

// taintsAre waits until the Cluster's taints are exactly want (key:effect).
func taintsAre(t *testing.T, c client.Client, name string, want ...string) {
	t.Helper()
	waitFor(t, name+" taints "+strings.Join(want, ","), func(ctx context.Context) (bool, error) {
		obj, err := getCluster(ctx, c, name)
		if err != nil {
			return false, err
		}
		return strings.Join(taintKeys(obj), ",") == strings.Join(want, ","), nil
	})
}

// register creates a Push Cluster reaching endpoint with secretRef, deleted
// (best effort) when the test ends.
func register(t *testing.T, c client.Client, name, endpoint string, secretRef clusterv1alpha1.LocalSecretReference) {
	t.Helper()
	obj := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: endpoint,
			SecretRef:   &secretRef,
		},
	}
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating Cluster %s: %v", name, err)
	}
}

func TestMemberIsReadyWithItsExecutionSpace(t *testing.T) {
	e := start(t, fast)
	name := e.fed.Members[0].Name

	obj := readyIs(t, e.client, name, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)
	if !controllerHasFinalizer(obj) {
		t.Errorf("finalizers = %v, want %s", obj.Finalizers, clusterv1alpha1.ClusterControllerFinalizer)
	}
	taintsAre(t, e.client, name)
	waitFor(t, "execution namespace exists", func(ctx context.Context) (bool, error) {
		var ns corev1.Namespace
		if err := e.client.Get(ctx, client.ObjectKey{Name: names.ExecutionSpace(name)}, &ns); err != nil {
			return false, err
		}
		return ns.Labels[workv1alpha1.KarmadaSystemLabel] == workv1alpha1.KarmadaSystemLabelValue, nil
	})
	waitFor(t, "CreateExecutionSpaceSucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, e.client, name, events.ReasonCreateExecutionSpaceSucceed)
	})

	// An execution namespace deleted by hand comes back.
	if err := e.client.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(name)}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "execution namespace recreated", func(ctx context.Context) (bool, error) {
		var ns corev1.Namespace
		if err := e.client.Get(ctx, client.ObjectKey{Name: names.ExecutionSpace(name)}, &ns); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ns.DeletionTimestamp.IsZero(), nil
	})
}

func controllerHasFinalizer(c *clusterv1alpha1.Cluster) bool {
	for _, f := range c.Finalizers {
		if f == clusterv1alpha1.ClusterControllerFinalizer {
			return true
		}
	}
	return false
}

// TestUnreachableMemberIsTaintedAndRecovers takes a member's API server away
// (behind a proxy that is stopped) and brings it back.
func TestUnreachableMemberIsTaintedAndRecovers(t *testing.T) {
	e := start(t, fast)
	member := e.fed.Members[0]
	proxy := controllertest.StartTCPProxy(t, strings.TrimPrefix(member.Endpoint, "https://"))
	const name = "flaky"
	register(t, e.client, name, "https://"+proxy.Addr, clusterv1alpha1.LocalSecretReference{Namespace: localfed.NamespaceCluster, Name: member.Name})
	t.Cleanup(func() { deleteAndWait(t, e.client, name) })

	readyIs(t, e.client, name, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)
	taintsAre(t, e.client, name)

	proxy.Stop()
	// As Karmada: Ready=False, not Unknown, and so the not-ready taint.
	obj := readyIs(t, e.client, name, metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReachable)
	cond := meta.FindStatusCondition(obj.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond.Message != "cluster is not reachable" {
		t.Errorf("Ready message = %q, want %q", cond.Message, "cluster is not reachable")
	}
	taintsAre(t, e.client, name, clusterv1alpha1.TaintClusterNotReady+":NoSchedule")
	waitFor(t, "TaintClusterSucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, e.client, name, events.ReasonTaintClusterSucceed)
	})

	proxy.Restart(t)
	readyIs(t, e.client, name, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)
	taintsAre(t, e.client, name)
}

// TestUnhealthyMemberIsNotReady points a Cluster at an API server whose
// /readyz fails.
func TestUnhealthyMemberIsNotReady(t *testing.T) {
	e := start(t, fast)
	sick := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "[-]etcd failed: reason withheld\nreadyz check failed", http.StatusInternalServerError)
	}))
	defer sick.Close()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: localfed.NamespaceCluster, Name: "sick"},
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte("token"),
			clusterv1alpha1.SecretCADataKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sick.Certificate().Raw}),
		},
	}
	if err := e.client.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), secret) })
	register(t, e.client, "sick", sick.URL, clusterv1alpha1.LocalSecretReference{Namespace: secret.Namespace, Name: secret.Name})
	t.Cleanup(func() { deleteAndWait(t, e.client, "sick") })

	obj := readyIs(t, e.client, "sick", metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReady)
	if cond := meta.FindStatusCondition(obj.Status.Conditions, clusterv1alpha1.ClusterConditionReady); !strings.Contains(cond.Message, "etcd failed") {
		t.Errorf("Ready message = %q, want the failed check", cond.Message)
	}
	taintsAre(t, e.client, "sick", clusterv1alpha1.TaintClusterNotReady+":NoSchedule")
}

func TestDeletedClusterReleasesItsExecutionSpace(t *testing.T) {
	e := start(t, fast)
	member := e.fed.Members[0]
	const name = "leaving"
	register(t, e.client, name, member.Endpoint, clusterv1alpha1.LocalSecretReference{Namespace: localfed.NamespaceCluster, Name: member.Name})
	readyIs(t, e.client, name, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)

	ns := names.ExecutionSpace(name)
	waitFor(t, "execution namespace exists", func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return err == nil, client.IgnoreNotFound(err)
	})
	work := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{
			RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"}}`)},
		}}}},
	}
	if err := e.client.Create(t.Context(), work); err != nil {
		t.Fatal(err)
	}

	deleteAndWait(t, e.client, name)
	if err := e.client.Get(t.Context(), client.ObjectKeyFromObject(work), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("Work after the cluster's deletion: %v, want NotFound", err)
	}
	if err := e.client.Get(t.Context(), client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("execution namespace after the cluster's deletion: %v, want NotFound", err)
	}
	waitFor(t, "RemoveExecutionSpaceSucceed event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, e.client, name, events.ReasonRemoveExecutionSpaceSucceed)
	})
}

// deleteAndWait deletes a Cluster and waits until the controller released it.
func deleteAndWait(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
		t.Fatalf("deleting Cluster %s: %v", name, err)
	}
	waitFor(t, "Cluster "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := getCluster(ctx, c, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
