package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// singleClusterFailover is a policy placing one Deployment on one of
// member1 and member2, moved when it stays unhealthy for 3s.
func singleClusterFailover(ns, name string, purge policyv1alpha1.PurgeMode) *policyv1alpha1.PropagationPolicy {
	pp := propagationPolicy(ns, name, []string{"member1", "member2"}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: name})
	pp.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}}
	pp.Spec.PropagateDeps = true
	pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](3)},
		PurgeMode:          purge,
	}}
	return pp
}

// breakIn makes the Deployment unhealthy in one cluster only: an override
// gives its pods a node selector no node there has, so the rollout never
// completes.
func breakIn(t *testing.T, ns, name, cluster string) {
	t.Helper()
	create(t, &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "break-" + name},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/spec/template/spec/nodeSelector", Operator: policyv1alpha1.OverriderOpAdd,
					Value: apiextensionsJSON(t, map[string]string{"e2e.flotilla.io/nowhere": "true"}),
				}}},
			}},
		},
	})
}

// placedOn waits until the binding is scheduled to one cluster that is not
// except, and returns it.
func placedOn(t *testing.T, ns, name, except string) string {
	t.Helper()
	var placed string
	eventually(t, fmt.Sprintf("%s placed on one cluster other than %q", name, except), func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Binding(name, "Deployment")}, &rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name == except {
			return false, nil
		}
		placed = rb.Spec.Clusters[0].Name
		return true, nil
	})
	return placed
}

func otherOf(cluster string) string {
	if cluster == "member1" {
		return "member2"
	}
	return "member1"
}

// TestApplicationFailoverPreservesState: a Deployment that stays unhealthy
// in its one cluster is moved to the other; purged Directly, its old copy
// goes at once, and the new copy is created with the state the policy
// preserves from the old one's status as a label.
func TestApplicationFailoverPreservesState(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-appfailover-state")
	const label = "failover.e2e.flotilla.io/generation"
	pp := singleClusterFailover(ns, "job", policyv1alpha1.PurgeModeDirectly)
	pp.Spec.Failover.Application.StatePreservation = &policyv1alpha1.StatePreservation{
		Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: label, JSONPath: "{.observedGeneration}"}},
	}
	create(t, pp)
	d := deployment(ns, "job", 2, "registry.example/job:1")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	first := placedOn(t, ns, d.Name, "")
	second := otherOf(first)
	inMembers(t, []string{first}, key, newDeployment, "job running", func(got *appsv1.Deployment) bool { return got.Status.AvailableReplicas == 2 })

	// The label lives on the new copy while the eviction that carries it
	// lasts: watch the member from before the move, so that no version of
	// the new copy goes unseen.
	seen := watchLabel(t, second, ns, d.Name, label)
	breakIn(t, ns, d.Name, first)
	if got := placedOn(t, ns, d.Name, first); got != second {
		t.Fatalf("moved to %s, want %s", got, second)
	}
	goneFrom(t, []string{first}, key, newDeployment())
	inMembers(t, []string{second}, key, newDeployment, "job running in "+second, func(got *appsv1.Deployment) bool { return got.Status.AvailableReplicas == 2 })
	eventually(t, "the new copy created with the preserved state", func(context.Context) (bool, error) {
		v, ok := seen()
		// The old copy's last status: generation 2, the override
		// observed (the toleration runs for seconds after it is).
		if ok && v != "2" {
			return false, fmt.Errorf("label %s=%q, want 2 (the old copy's status.observedGeneration)", label, v)
		}
		return ok, nil
	})
}

// TestApplicationFailoverNeverPurges: purged Never, the unhealthy copy
// stays where it is while the replacement runs elsewhere, until a user
// lifts the task's suppressDeletion.
func TestApplicationFailoverNeverPurges(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-appfailover-never")
	create(t, singleClusterFailover(ns, "web", policyv1alpha1.PurgeModeNever))
	d := deployment(ns, "web", 2, "registry.example/web:1")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	first := placedOn(t, ns, d.Name, "")
	second := otherOf(first)
	inMembers(t, []string{first}, key, newDeployment, "web running", func(got *appsv1.Deployment) bool { return got.Status.AvailableReplicas == 2 })

	breakIn(t, ns, d.Name, first)
	placedOn(t, ns, d.Name, first)
	inMembers(t, []string{second}, key, newDeployment, "web running in "+second, func(got *appsv1.Deployment) bool { return got.Status.AvailableReplicas == 2 })
	rbKey := client.ObjectKey{Namespace: ns, Name: names.Binding(d.Name, "Deployment")}
	var rb workv1alpha2.ResourceBinding
	if err := cp.Get(t.Context(), rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rb.Spec.GracefulEvictionTasks, func(t workv1alpha2.GracefulEvictionTask) bool { return t.FromCluster == first })
	if i < 0 {
		t.Fatalf("no eviction task for %s: %+v", first, rb.Spec.GracefulEvictionTasks)
	}
	task := rb.Spec.GracefulEvictionTasks[i]
	if task.Reason != workv1alpha2.EvictionReasonApplicationFailure || task.Producer != "resource-binding-application-failover-controller" ||
		task.SuppressDeletion == nil || !*task.SuppressDeletion || task.PurgeMode != policyv1alpha1.PurgeModeNever {
		t.Errorf("eviction task %+v", task)
	}
	// Kept: the old copy is still there, and stays.
	staysSo(t, "the old copy kept in "+first, func(ctx context.Context) (bool, error) {
		err := member(t, first).Client.Get(ctx, key, &appsv1.Deployment{})
		return err == nil, client.IgnoreNotFound(err)
	})

	update(t, &rb, func(rb *workv1alpha2.ResourceBinding) {
		for i := range rb.Spec.GracefulEvictionTasks {
			rb.Spec.GracefulEvictionTasks[i].SuppressDeletion = ptr.To(false)
		}
	})
	goneFrom(t, []string{first}, key, newDeployment())
	eventually(t, "the task ended", func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, rbKey, &rb); err != nil {
			return false, err
		}
		return len(rb.Spec.GracefulEvictionTasks) == 0, nil
	})
}

// watchLabel watches the Deployment in a member and reports the value of
// label on the first version that had it.
func watchLabel(t *testing.T, cluster, ns, name, label string) func() (string, bool) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(member(t, cluster).Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.AppsV1().Deployments(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				if v, ok := d.Labels[label]; ok {
					found <- v
					return
				}
			}
		}
	}()
	var value string
	var got bool
	return func() (string, bool) {
		if !got {
			select {
			case value = <-found:
				got = true
			default:
			}
		}
		return value, got
	}
}

func apiextensionsJSON(t *testing.T, v any) apiextensionsv1.JSON {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return apiextensionsv1.JSON{Raw: raw}
}
