package clusterstatus

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Karmada's defaults of --cluster-success-threshold and
// --cluster-failure-threshold.
const (
	DefaultSuccessThreshold = 30 * time.Second
	DefaultFailureThreshold = 30 * time.Second
)

// Thresholds say how long a member's observed health must hold before the
// Ready condition an agent reports follows it: a member that answers again
// is Ready only once it has answered for Success, and one that stops
// answering is not Ready only once it has failed for Failure. A blip
// shorter than that leaves Ready as it was.
type Thresholds struct {
	Success time.Duration
	Failure time.Duration
}

// readiness remembers, per Cluster, the health last observed and since
// when it has been observed so; the Cluster's uid keys the record so that
// one recreated under the same name starts afresh.
type readiness struct {
	mu       sync.Mutex
	clusters map[string]observedSince
}

type observedSince struct {
	uid     types.UID
	healthy bool
	since   time.Time
}

// observe records the health observed at now and returns since when it
// has held, and whether this Cluster was observed before.
func (r *readiness) observe(name string, uid types.UID, healthy bool, now time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clusters == nil {
		r.clusters = map[string]observedSince{}
	}
	last, seen := r.clusters[name]
	if !seen || last.uid != uid || last.healthy != healthy {
		r.clusters[name] = observedSince{uid: uid, healthy: healthy, since: now}
		return now, seen && last.uid == uid
	}
	return last.since, true
}

func (r *readiness) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.clusters, name)
}

// decideReady is the Ready condition to report given the stored one and
// the health observed continuously since since. The first observation of
// a Cluster, a Cluster without Ready yet, and anything but a flip between
// True and False are taken at once, as in Karmada; a flip waits for its
// threshold.
func decideReady(stored *metav1.Condition, observed metav1.Condition, since, now time.Time, seenBefore bool, th Thresholds) metav1.Condition {
	if !seenBefore || stored == nil {
		return observed
	}
	threshold := th.Failure
	if observed.Status == metav1.ConditionTrue {
		threshold = th.Success
	}
	flip := (stored.Status == metav1.ConditionTrue && observed.Status == metav1.ConditionFalse) ||
		(stored.Status == metav1.ConditionFalse && observed.Status == metav1.ConditionTrue)
	if flip && now.Sub(since) < threshold {
		kept := *stored
		kept.LastTransitionTime = metav1.Time{}
		kept.ObservedGeneration = observed.ObservedGeneration
		return kept
	}
	return observed
}
