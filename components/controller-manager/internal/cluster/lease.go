package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// DefaultLeaseGracePeriod is karmada-controller-manager's
// --cluster-monitor-grace-period: how long a Pull member's agent may go
// without renewing its lease before the member's Ready turns Unknown.
const DefaultLeaseGracePeriod = 40 * time.Second

// msgStatusUnknown is the Ready message of a Pull member whose agent went
// quiet, as Karmada words it.
const msgStatusUnknown = "Cluster status controller stopped posting cluster status."

// leaseRecord is what this controller last saw of a Pull member's lease.
// Freshness is measured on this controller's clock, from when a new
// renewTime was first seen, not by comparing the agent's clock with ours:
// the member's machines may be minutes off.
type leaseRecord struct {
	uid       types.UID
	renewTime time.Time
	seen      time.Time
}

// leaseTracker keeps a leaseRecord per Pull cluster. It is safe for
// concurrent use.
type leaseTracker struct {
	mu      sync.Mutex
	records map[string]*leaseRecord
}

func newLeaseTracker() *leaseTracker { return &leaseTracker{records: map[string]*leaseRecord{}} }

// observe records the lease's renewTime (zero when there is no lease) and
// returns when it was first seen with that value. A cluster seen for the
// first time, or recreated, starts its grace period now, so that an agent
// gets the whole period to show up after the controller starts.
func (t *leaseTracker) observe(name string, uid types.UID, renewTime, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.records[name]
	if !ok || r.uid != uid || !r.renewTime.Equal(renewTime) {
		r = &leaseRecord{uid: uid, renewTime: renewTime, seen: now}
		t.records[name] = r
	}
	return r.seen
}

func (t *leaseTracker) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.records, name)
}

// decideLeaseReady is the Ready condition of a Pull member: what its agent
// reported while the lease is renewed within grace, Unknown once it is not.
// It returns nil when the stored condition stands. A member whose agent
// never reported stays without Ready (and so tainted not-ready) until the
// grace period ends, then is Unknown.
func decideLeaseReady(stored *metav1.Condition, lastRenewSeen, now time.Time, grace time.Duration) *metav1.Condition {
	if now.Sub(lastRenewSeen) <= grace {
		return nil
	}
	if stored != nil && stored.Status == metav1.ConditionUnknown && stored.Reason == clusterv1alpha1.ClusterReasonStatusUnknown {
		return nil
	}
	return &metav1.Condition{
		Type:    clusterv1alpha1.ClusterConditionReady,
		Status:  metav1.ConditionUnknown,
		Reason:  clusterv1alpha1.ClusterReasonStatusUnknown,
		Message: msgStatusUnknown,
	}
}

// reconcileLeaseReady judges a Pull member by its agent's lease
// karmada-cluster/<name> in the control plane and returns when to look
// again: when the grace period would end without a renewal, at most a
// health period away.
func (r *Reconciler) reconcileLeaseReady(ctx context.Context, cluster *clusterv1alpha1.Cluster) (time.Duration, error) {
	var renewTime time.Time
	lease := &coordinationv1.Lease{}
	// Read directly: one small read per Pull member and period costs less
	// than caching every Lease of the control plane.
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: cluster.Name}, lease)
	switch {
	case err == nil:
		if lease.Spec.RenewTime != nil {
			renewTime = lease.Spec.RenewTime.Time
		}
	case !apierrors.IsNotFound(err):
		return 0, fmt.Errorf("reading the lease of Pull cluster %s: %w", cluster.Name, err)
	}
	now := time.Now()
	seen := r.leases.observe(cluster.Name, cluster.UID, renewTime, now)
	stored := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if decided := decideLeaseReady(stored, seen, now, r.Health.LeaseGracePeriod); decided != nil {
		decided.ObservedGeneration = cluster.Generation
		ctrl.LoggerFrom(ctx).Info("Agent stopped renewing its lease", "lastRenewal", renewTime, "grace", r.Health.LeaseGracePeriod)
		if err := r.patchReady(ctx, cluster, *decided); err != nil {
			return 0, fmt.Errorf("writing Ready condition: %w", err)
		}
		return r.Health.Period, nil
	}
	return min(r.Health.Period, max(seen.Add(r.Health.LeaseGracePeriod).Sub(now), 0)+time.Second), nil
}
