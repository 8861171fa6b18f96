package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

var failoverTemplates = flag.Int("bench.failover-templates", 1000, "Templates BenchmarkFailover moves off a member.")

// failoverTaint is what takes the member away in BenchmarkFailover: a
// NoExecute taint no policy tolerates, as a ClusterTaintPolicy adds to a
// member that stops being Ready.
var failoverTaint = corev1.Taint{Key: "bench.flotilla.io/failover", Effect: corev1.TaintEffectNoExecute}

// BenchmarkFailover divides N Deployments 1:1:1 over the 3 members, taints
// the last member NoExecute and measures until every template runs all its
// replicas on the other two and none is left on the tainted one: the taint
// manager's evictions, the reschedules, the new Works and the removal of
// the old ones (purge mode Directly: bare API server members run no pods,
// so no replacement ever reports healthy for a graceful purge to wait on).
//
// Reported: failover-s (taint to the last member object in place), and
// bindings/s, with the controller-manager's and the scheduler's CPU
// seconds over the failover.
func BenchmarkFailover(b *testing.B) {
	b.StopTimer()
	for range b.N {
		r := bench.failover(b, *failoverTemplates, func(on bool) {
			if on {
				b.StartTimer()
			} else {
				b.StopTimer()
			}
		})
		b.ReportMetric(r.elapsed.Seconds(), "failover-s")
		b.ReportMetric(float64(r.templates)/r.elapsed.Seconds(), "bindings/s")
		b.ReportMetric(r.cm.cpu.Seconds(), "cm-cpu-s")
		b.ReportMetric(r.sched.cpu.Seconds(), "sched-cpu-s")
	}
}

// TestFailover moves 20 templates off a member: the benchmark's harness,
// kept working by CI.
func TestFailover(t *testing.T) {
	r := bench.failover(t, 20, func(bool) {})
	t.Logf("20 templates failed over in %s", r.elapsed.Round(time.Millisecond))
}

func (e *env) failover(tb testing.TB, n int, timer func(on bool)) result {
	tb.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("bench-failover-%d-%d", n, namespaceSeq.Add(1))
	e.createNamespace(tb, ctx, ns)
	defer e.deleteNamespace(tb, ctx, ns)
	pp := e.policy(ns, scenario{strategy: policyv1alpha1.ReplicaSchedulingTypeDivided})
	pp.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}}
	if err := e.cp.Create(ctx, pp); err != nil {
		tb.Fatalf("creating the PropagationPolicy: %v", err)
	}
	w := e.watchMembers(tb, ns, 1, n)
	e.createTemplates(tb, ctx, ns, n)
	if err := e.waitArrivals(ctx, w, 10*time.Minute+time.Duration(n)*500*time.Millisecond); err != nil {
		tb.Fatalf("%v\n%s", err, e.diagnose(ctx, ns, w, n))
	}
	w.stop()

	victim := e.members[len(e.members)-1].name
	defer e.setTaint(tb, victim, false)
	before := e.usage(tb)
	timer(true)
	began := time.Now()
	e.setTaint(tb, victim, true)
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute+time.Duration(n)*500*time.Millisecond, true,
		func(ctx context.Context) (bool, error) { return e.failedOver(ctx, ns, n, victim) })
	elapsed := time.Since(began)
	timer(false)
	if err != nil {
		tb.Fatalf("templates not moved off %s: %v (components: %v)", victim, err, e.componentsAlive())
	}
	after := e.usage(tb)
	r := result{templates: n, elapsed: elapsed,
		cm:    usage{cpu: after[0].cpu - before[0].cpu},
		sched: usage{cpu: after[1].cpu - before[1].cpu},
	}
	fmt.Fprintf(os.Stderr, "%s: %d templates off %s in %s (%.1f bindings/s), controller-manager %.1f CPU-s, scheduler %.1f CPU-s\n",
		ns, n, victim, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), r.cm.cpu.Seconds(), r.sched.cpu.Seconds())
	return r
}

// failedOver reports whether the tainted member holds none of the
// namespace's Deployments and the others hold every template with all its
// replicas between them.
func (e *env) failedOver(ctx context.Context, ns string, n int, victim string) (bool, error) {
	replicas := make(map[string]int32, n)
	for _, m := range e.members {
		list, err := m.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		if m.name == victim {
			if len(list.Items) > 0 {
				return false, nil
			}
			continue
		}
		for _, d := range list.Items {
			replicas[d.Name] += *d.Spec.Replicas
		}
	}
	if len(replicas) != n {
		return false, nil
	}
	for _, r := range replicas {
		if r != templateReplicas {
			return false, nil
		}
	}
	return true, nil
}

// setTaint adds or removes failoverTaint on a member's Cluster.
func (e *env) setTaint(tb testing.TB, name string, on bool) {
	tb.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := e.cp.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		has := slices.ContainsFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&failoverTaint) })
		switch {
		case on && !has:
			t := failoverTaint
			t.TimeAdded = &metav1.Time{Time: time.Now()}
			c.Spec.Taints = append(c.Spec.Taints, t)
		case !on && has:
			c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&failoverTaint) })
		default:
			return nil
		}
		return e.cp.Update(context.Background(), c)
	})
	if err != nil {
		tb.Fatalf("tainting %s: %v", name, err)
	}
}
