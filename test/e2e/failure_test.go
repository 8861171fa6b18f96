package e2e

// The scenarios of this file take parts of the federation away: a member, the
// controller-manager. They never call t.Parallel, so they run one after the
// other before the parallel scenarios start, and each leaves the federation
// as it found it: every member up and Ready, the controller-manager running.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

const notReadyTaint = clusterv1alpha1.TaintClusterNotReady + ":" + string(corev1.TaintEffectNoSchedule)

// TestMemberStoppedAndRestarted stops a member whole. While it is down its
// Cluster is Ready=False (ClusterNotReachable) with the not-ready taint, the
// controller-manager keeps running, a new Duplicated ConfigMap goes to the
// other members only, and a template changed meanwhile reaches the member
// once it is back, Ready and untainted, with the control plane watching it
// again.
func TestMemberStoppedAndRestarted(t *testing.T) {
	const victim = "member3"
	others := []string{"member1", "member2"}
	// Created while every member is up: the namespace reaches each of them.
	ns := namespace(t, "e2e-member-failure")
	t.Cleanup(func() { restoreFederation(t) })
	// What is scheduled while a member is tainted stays off it, so the
	// scenario starts from every member Ready and untainted.
	if err := waitFederationHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}

	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
		},
	})
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}, Data: map[string]string{"rev": "1"}}
	create(t, before)
	waitConfigMapIn(t, fed.MemberNames(), before, "1")

	stopping := time.Now()
	if err := fed.StopMember(t.Context(), victim); err != nil {
		t.Fatalf("stopping %s: %v", victim, err)
	}
	stopped := time.Now()
	cluster := waitClusterReady(t, victim, metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReachable, notReadyTaint)
	t.Logf("%s stopped in %s; not ready and tainted %s after the stop began", victim,
		stopped.Sub(stopping).Round(100*time.Millisecond), time.Since(stopping).Round(100*time.Millisecond))
	if cond := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond.Message != "cluster is not reachable" {
		t.Errorf("Ready message of %s = %q, want %q", victim, cond.Message, "cluster is not reachable")
	}
	checkControllerManagerAlive(t)

	// The scheduler learns of the taint through its own informer. A probe
	// placed on the other members only shows that it has, so that what
	// follows can be strict.
	for i := 0; ; i++ {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe-" + strconv.Itoa(i)}}
		create(t, probe)
		if got := waitScheduled(t, ns, probe.Name, "ConfigMap"); slices.Equal(got, others) {
			break
		} else if i == 4 {
			t.Fatalf("5 probes scheduled to %v while %s was tainted, want %v", got, victim, others)
		}
	}

	during := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "during"}, Data: map[string]string{"rev": "1"}}
	create(t, during)
	if got := waitScheduled(t, ns, during.Name, "ConfigMap"); !slices.Equal(got, others) {
		t.Errorf("ConfigMap created while %s is down scheduled to %v, want %v", victim, got, others)
	}
	waitConfigMapIn(t, others, during, "1")
	work := &workv1alpha1.Work{}
	err := cp.Get(t.Context(), client.ObjectKey{Namespace: names.ExecutionSpace(victim), Name: names.Work(ns, during.Name, "ConfigMap")}, work)
	if !apierrors.IsNotFound(err) {
		t.Errorf("Work of the new ConfigMap for %s: %v, want none", victim, err)
	}

	// A change made while the member is down: the others get it at once,
	// the member's Work holds it until the member is back.
	updateConfigMap(t, before, "2")
	waitConfigMapIn(t, others, before, "2")
	eventually(t, "the Work of "+victim+" carries the change", func(ctx context.Context) (bool, error) {
		work := &workv1alpha1.Work{}
		key := client.ObjectKey{Namespace: names.ExecutionSpace(victim), Name: names.Work(ns, before.Name, "ConfigMap")}
		if err := cp.Get(ctx, key, work); err != nil {
			return false, err
		}
		if len(work.Spec.Workload.Manifests) == 0 {
			return false, nil
		}
		var cm corev1.ConfigMap
		if err := json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, &cm); err != nil {
			return false, err
		}
		return cm.Data["rev"] == "2", nil
	})
	checkControllerManagerAlive(t)

	restarting := time.Now()
	if err := fed.StartMember(t.Context(), victim); err != nil {
		t.Fatalf("starting %s again: %v", victim, err)
	}
	started := time.Now()
	waitClusterReady(t, victim, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady)
	waitConfigMapIn(t, []string{victim}, before, "2")
	t.Logf("%s started again in %s; Ready, untainted and in sync %s later", victim,
		started.Sub(restarting).Round(100*time.Millisecond), time.Since(started).Round(100*time.Millisecond))
	// Duplicated means every cluster that fits: the ConfigMap created while
	// the member was down follows it once it is back, as in Karmada.
	waitConfigMapIn(t, fed.MemberNames(), during, "1")

	// The member informers watch the member again: an object deleted there
	// behind the control plane's back is noticed and applied again.
	if err := member(t, victim).Client.Delete(t.Context(), before.DeepCopy()); err != nil {
		t.Fatalf("deleting %s from %s: %v", before.Name, victim, err)
	}
	waitConfigMapIn(t, []string{victim}, before, "2")
	checkControllerManagerAlive(t)
}

// TestControllerManagerRestart stops the controller-manager while a batch
// of Deployments and ConfigMaps propagates, changes, deletes and adds
// templates while it is down, and starts a fresh one: in the end every
// template is in every member once with its latest content, with one Work
// per member, and nothing is left of the deleted ones.
func TestControllerManagerRestart(t *testing.T) {
	ns := namespace(t, "e2e-cm-restart")
	t.Cleanup(func() { restoreFederation(t) })
	if err := waitFederationHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}
	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment"},
				{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch": "true"}}},
			},
		},
	})

	// rev is each live template's content, by kind/name.
	rev := map[string]string{}
	const batch = 15
	for i := range batch {
		createBatchPair(t, ns, i, "1", rev)
	}
	eventually(t, "propagation under way", func(ctx context.Context) (bool, error) {
		works, err := batchWorks(ctx, "member1", ns)
		return len(works) > 0, err
	})
	if err := controllerManager.stop(); err != nil {
		t.Fatalf("stopping the controller-manager: %v", err)
	}

	// While it is down: change five pairs, delete three, add three.
	for i := range 5 {
		updateConfigMap(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchName(i)}}, "2")
		updateDeployment(t, ns, batchName(i), "2")
		rev["ConfigMap/"+batchName(i)], rev["Deployment/"+batchName(i)] = "2", "2"
	}
	for i := 10; i < 13; i++ {
		remove := []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchName(i)}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batchName(i)}},
		}
		for _, obj := range remove {
			if err := cp.Delete(t.Context(), obj); err != nil {
				t.Fatalf("deleting %T %s: %v", obj, obj.GetName(), err)
			}
		}
		delete(rev, "ConfigMap/"+batchName(i))
		delete(rev, "Deployment/"+batchName(i))
	}
	for i := batch; i < batch+3; i++ {
		createBatchPair(t, ns, i, "1", rev)
	}

	if err := controllerManager.start(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	want := slices.Sorted(maps.Keys(rev))
	for _, m := range fed.MemberNames() {
		eventually(t, "the batch in "+m+" as the templates are", func(ctx context.Context) (bool, error) {
			got, err := batchInMember(ctx, m, ns)
			if err != nil {
				return false, err
			}
			return maps.Equal(got, rev), nil
		})
		eventually(t, "one Work per template for "+m, func(ctx context.Context) (bool, error) {
			works, err := batchWorks(ctx, m, ns)
			if err != nil {
				return false, err
			}
			for _, n := range works {
				if n != 1 {
					return false, fmt.Errorf("works by template in %s: %v", m, works)
				}
			}
			return slices.Equal(slices.Sorted(maps.Keys(works)), want), nil
		})
	}
	eventually(t, "one ResourceBinding per template", func(ctx context.Context) (bool, error) {
		var bindings workv1alpha2.ResourceBindingList
		if err := cp.List(ctx, &bindings, client.InNamespace(ns)); err != nil {
			return false, err
		}
		got := make([]string, 0, len(bindings.Items))
		for _, b := range bindings.Items {
			got = append(got, b.Spec.Resource.Kind+"/"+b.Spec.Resource.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	t.Logf("%d templates in sync in %d members %s after the controller-manager restarted", len(want), len(fed.Members), time.Since(restarted).Round(100*time.Millisecond))
	checkControllerManagerAlive(t)
}

func batchName(i int) string { return fmt.Sprintf("batch-%02d", i) }

// createBatchPair creates the i-th ConfigMap and Deployment of the batch with
// content rev, and records them in revs.
func createBatchPair(t *testing.T, ns string, i int, rev string, revs map[string]string) {
	t.Helper()
	name := batchName(i)
	create(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"batch": "true"}},
		Data:       map[string]string{"rev": rev},
	})
	labels := map[string]string{"app": name}
	create(t, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "nginx",
					Env:   []corev1.EnvVar{{Name: "REV", Value: rev}},
				}}},
			},
		},
	})
	revs["ConfigMap/"+name], revs["Deployment/"+name] = rev, rev
}

// batchInMember returns the batch's objects in a member, by kind/name, with
// their content.
func batchInMember(ctx context.Context, member, ns string) (map[string]string, error) {
	c := fed.Member(member).Client
	got := map[string]string{}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "batch-") {
			got["ConfigMap/"+cm.Name] = cm.Data["rev"]
		}
	}
	var deploys appsv1.DeploymentList
	if err := c.List(ctx, &deploys, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for _, d := range deploys.Items {
		got["Deployment/"+d.Name] = envOf(&d, "REV")
	}
	return got, nil
}

func envOf(d *appsv1.Deployment, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// batchWorks counts the Works for a member whose manifests are objects of
// namespace ns, by the objects' kind/name.
func batchWorks(ctx context.Context, member, ns string) (map[string]int, error) {
	var works workv1alpha1.WorkList
	if err := cp.List(ctx, &works, client.InNamespace(names.ExecutionSpace(member))); err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, w := range works.Items {
		for _, m := range w.Spec.Workload.Manifests {
			var obj metav1.PartialObjectMetadata
			if err := json.Unmarshal(m.Raw, &obj); err != nil {
				return nil, fmt.Errorf("manifest of Work %s: %w", w.Name, err)
			}
			if obj.Namespace == ns {
				count[obj.Kind+"/"+obj.Name]++
			}
		}
	}
	return count, nil
}

// waitClusterReady waits until a Cluster's Ready condition has status and
// reason and the taints this project manages from it are exactly taints
// (key:effect), and returns the Cluster.
func waitClusterReady(t *testing.T, name string, status metav1.ConditionStatus, reason string, taints ...string) *clusterv1alpha1.Cluster {
	t.Helper()
	got := &clusterv1alpha1.Cluster{}
	eventually(t, fmt.Sprintf("Cluster %s Ready=%s (%s) with taints %v", name, status, reason, taints), func(ctx context.Context) (bool, error) {
		return clusterIs(ctx, got, name, status, reason, taints)
	})
	return got
}

// waitScheduled waits until the template's ResourceBinding is scheduled and
// returns the clusters it was placed on, sorted.
func waitScheduled(t *testing.T, ns, name, kind string) []string {
	t.Helper()
	var clusters []string
	eventually(t, kind+" "+name+" scheduled", func(ctx context.Context) (bool, error) {
		var rb workv1alpha2.ResourceBinding
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Binding(name, kind)}, &rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) || len(rb.Spec.Clusters) == 0 {
			return false, nil
		}
		clusters = clusters[:0]
		for _, c := range rb.Spec.Clusters {
			clusters = append(clusters, c.Name)
		}
		slices.Sort(clusters)
		return true, nil
	})
	return clusters
}

// waitConfigMapIn waits until each named member has the ConfigMap with data
// rev=rev.
func waitConfigMapIn(t *testing.T, members []string, cm *corev1.ConfigMap, rev string) {
	t.Helper()
	for _, m := range members {
		c := member(t, m).Client
		eventually(t, fmt.Sprintf("ConfigMap %s rev %s in %s", cm.Name, rev, m), func(ctx context.Context) (bool, error) {
			var got corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return got.Data["rev"] == rev, nil
		})
	}
}

// updateConfigMap sets the template's data rev=rev; the controllers write
// templates too, hence the retries.
func updateConfigMap(t *testing.T, cm *corev1.ConfigMap, rev string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var got corev1.ConfigMap
		if err := cp.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
			return err
		}
		got.Data["rev"] = rev
		return cp.Update(t.Context(), &got)
	})
	if err != nil {
		t.Fatalf("updating ConfigMap %s: %v", cm.Name, err)
	}
}

// updateDeployment sets the template's REV variable.
func updateDeployment(t *testing.T, ns, name, rev string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var got appsv1.Deployment
		if err := cp.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &got); err != nil {
			return err
		}
		got.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "REV", Value: rev}}
		return cp.Update(t.Context(), &got)
	})
	if err != nil {
		t.Fatalf("updating Deployment %s: %v", name, err)
	}
}

// checkControllerManagerAlive fails t if an in-process component returned
// on its own, as it would by crashing, or the controller-manager is not
// running.
func checkControllerManagerAlive(t *testing.T) {
	t.Helper()
	for _, c := range []*component{controllerManager, scheduler} {
		if err := c.exited(); err != nil {
			t.Fatal(err)
		}
	}
	if !controllerManager.running() {
		t.Fatal("the controller-manager is not running")
	}
}

// restoreFederation brings back what a disruptive scenario may have left
// stopped, after a failure too, and waits until every member is Ready and
// untainted, so that the next scenario starts on a healthy federation. It
// runs as a cleanup, when the test's context is already cancelled.
func restoreFederation(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, m := range fed.MemberNames() {
		if err := fed.StartMember(ctx, m); err != nil {
			t.Errorf("starting %s again: %v", m, err)
		}
	}
	if !controllerManager.running() {
		if err := controllerManager.start(); err != nil {
			t.Error(err)
		}
	}
	if err := waitFederationHealthy(ctx); err != nil {
		t.Error(err)
	}
}
