package clustertaintpolicy_test

import (
	"context"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func setReady(t *testing.T, c client.Client, name string, status metav1.ConditionStatus) {
	t.Helper()
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status,
		Reason: "Test", LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
}

func hasTaint(key string, effect corev1.TaintEffect) func(*clusterv1alpha1.Cluster) bool {
	return func(c *clusterv1alpha1.Cluster) bool {
		return slices.ContainsFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
	}
}

func waitCluster(t *testing.T, c client.Client, name, what string, cond func(*clusterv1alpha1.Cluster) bool) {
	t.Helper()
	controllertest.WaitFor(t, what, func(ctx context.Context) (bool, error) {
		cluster := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			return false, err
		}
		return cond(cluster), nil
	})
}

// TestPolicyFollowsConditions: a policy's NoExecute taint goes on a target
// cluster whose Ready turns False and comes off when it is True again; a
// cluster the policy does not target, and a taint of someone else's, are
// left alone; a policy edited to target another cluster taints it too.
func TestPolicyFollowsConditions(t *testing.T) {
	c := server.Client
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&clustertaintpolicy.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(clustertaintpolicy.ControllerName)}).SetupWithManager(mgr)
	})
	user := corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	for _, name := range []string{"ctp-a", "ctp-b"} {
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1", Taints: []corev1.Taint{user}}}
		if err := c.Create(t.Context(), cluster); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), cluster) })
		setReady(t, c, name, metav1.ConditionTrue)
	}
	policy := &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "detect-not-ready"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"ctp-a"}},
			AddOnConditions:    []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{"True"}}},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{"True"}}},
			Taints:             []policyv1alpha1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}},
		},
	}
	if err := c.Create(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), policy) })

	notReady := hasTaint(clusterv1alpha1.TaintClusterNotReady, corev1.TaintEffectNoExecute)
	setReady(t, c, "ctp-a", metav1.ConditionFalse)
	setReady(t, c, "ctp-b", metav1.ConditionFalse)
	waitCluster(t, c, "ctp-a", "ctp-a tainted not-ready:NoExecute, its own taint kept", func(cl *clusterv1alpha1.Cluster) bool {
		return notReady(cl) && hasTaint("team", corev1.TaintEffectNoSchedule)(cl)
	})
	controllertest.WaitFor(t, "a TaintClusterSucceed event on ctp-a", func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, c, "ctp-a", flotillaevents.ReasonTaintClusterSucceed)
	})

	setReady(t, c, "ctp-a", metav1.ConditionTrue)
	waitCluster(t, c, "ctp-a", "ctp-a untainted once Ready", func(cl *clusterv1alpha1.Cluster) bool {
		return !notReady(cl) && hasTaint("team", corev1.TaintEffectNoSchedule)(cl)
	})

	// ctp-b has been not ready all along; targeted now, it is tainted.
	if got := getCluster(t, c, "ctp-b"); notReady(got) {
		t.Fatal("ctp-b, not targeted, was tainted")
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(policy), policy); err != nil {
		t.Fatal(err)
	}
	policy.Spec.TargetClusters.ClusterNames = []string{"ctp-a", "ctp-b"}
	if err := c.Update(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	waitCluster(t, c, "ctp-b", "ctp-b tainted once targeted", notReady)
}

func getCluster(t *testing.T, c client.Client, name string) *clusterv1alpha1.Cluster {
	t.Helper()
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, cluster); err != nil {
		t.Fatal(err)
	}
	return cluster
}
