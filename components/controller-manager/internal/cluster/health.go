package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// HealthOptions say how often and how patiently members are probed.
type HealthOptions struct {
	// Period between two probes of a member. Default: 10s.
	Period time.Duration
	// Timeout of one probe. Default: 5s.
	Timeout time.Duration
	// FailureThreshold is how many probes in a row must fail before a Ready
	// member is marked not ready; it rides out a lost packet or an API server
	// restart. Default: 3.
	FailureThreshold int
	// SuccessThreshold is how many probes in a row must succeed before a
	// member that was not ready is marked Ready again. Default: 1.
	SuccessThreshold int
	// LeaseGracePeriod is how long the agent of a Pull member may leave its
	// lease unrenewed before the member is Ready=Unknown. Default:
	// DefaultLeaseGracePeriod.
	LeaseGracePeriod time.Duration
}

// Defaults of HealthOptions.
const (
	DefaultHealthPeriod     = 10 * time.Second
	DefaultHealthTimeout    = 5 * time.Second
	DefaultFailureThreshold = 3
	DefaultSuccessThreshold = 1
)

func (o HealthOptions) withDefaults() HealthOptions {
	if o.Period <= 0 {
		o.Period = DefaultHealthPeriod
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultHealthTimeout
	}
	if o.FailureThreshold <= 0 {
		o.FailureThreshold = DefaultFailureThreshold
	}
	if o.SuccessThreshold <= 0 {
		o.SuccessThreshold = DefaultSuccessThreshold
	}
	if o.LeaseGracePeriod <= 0 {
		o.LeaseGracePeriod = DefaultLeaseGracePeriod
	}
	return o
}

// Messages of the Ready condition, as Karmada words them; a failing health
// check's answer is appended to msgUnhealthy.
const (
	msgHealthy      = "cluster is healthy and ready to accept workloads"
	msgUnhealthy    = "cluster is reachable but health endpoint responded without ok"
	msgNotReachable = "cluster is not reachable"
)

// maxDetail bounds the probe detail copied into the condition's message.
const maxDetail = 512

// observation is the outcome of one probe, as the Ready condition it would
// give on its own: True (answered ok) or False, with reason ClusterNotReady
// (answered, not ok) or ClusterNotReachable (not reached at all). As in
// Karmada, a member that does not answer is False, not Unknown: the probe
// did run and the member failed it. Unknown is left for a member whose
// health nobody has been able to tell.
type observation struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	// detail is why the member could not be reached, for the log only: the
	// text of a connection error changes from one probe to the next (it may
	// name an ephemeral port), and in the message it would rewrite the
	// Cluster's status at every probe.
	detail string
}

func (o observation) healthy() bool { return o.status == metav1.ConditionTrue }

func observedHealthy() observation {
	return observation{status: metav1.ConditionTrue, reason: clusterv1alpha1.ClusterReasonReady, message: msgHealthy}
}

func observedUnhealthy(detail string) observation {
	return observation{status: metav1.ConditionFalse, reason: clusterv1alpha1.ClusterReasonNotReady, message: withDetail(msgUnhealthy, detail)}
}

func observedUnreachable(detail string) observation {
	return observation{status: metav1.ConditionFalse, reason: clusterv1alpha1.ClusterReasonNotReachable, message: msgNotReachable, detail: detail}
}

func withDetail(msg, detail string) string {
	detail = strings.TrimSpace(detail)
	if detail == "" {
		return msg
	}
	if len(detail) > maxDetail {
		detail = detail[:maxDetail] + "…"
	}
	return msg + ": " + detail
}

// probe asks the member's /readyz, or /healthz when an older or trimmed API
// server does not serve /readyz.
func probe(ctx context.Context, rc rest.Interface, timeout time.Duration) observation {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	code, body, err := get(ctx, rc, "/readyz")
	if code == http.StatusNotFound {
		code, body, err = get(ctx, rc, "/healthz")
	}
	return classify(code, body, err)
}

func get(ctx context.Context, rc rest.Interface, path string) (int, []byte, error) {
	var code int
	result := rc.Get().AbsPath(path).Do(ctx).StatusCode(&code)
	body, err := result.Raw()
	return code, body, err
}

// classify turns an HTTP outcome into an observation. A status code means
// the member answered, whatever it said (a 401 after a revoked token is
// "not ready", not "unreachable"); no status code means it was not reached.
func classify(code int, body []byte, err error) observation {
	switch {
	case code == 0 && err != nil:
		return observedUnreachable(err.Error())
	case code == 0:
		return observedUnreachable("no response")
	case code == http.StatusOK:
		return observedHealthy()
	case len(body) > 0:
		return observedUnhealthy(fmt.Sprintf("%d: %s", code, body))
	case err != nil:
		return observedUnhealthy(fmt.Sprintf("%d: %v", code, err))
	default:
		return observedUnhealthy(fmt.Sprint(code))
	}
}

// streak counts consecutive probes with the same health.
type streak struct {
	healthy bool
	count   int
}

func (s streak) next(healthy bool) streak {
	if s.count > 0 && s.healthy == healthy {
		return streak{healthy: healthy, count: s.count + 1}
	}
	return streak{healthy: healthy, count: 1}
}

// decideReady returns the Ready condition (type, status, reason and message)
// to store, given the stored one, the latest observation and the streak that
// observation extends. A flip between Ready and not ready waits for its
// threshold; anything else (a first observation, not ready to unreachable
// and back, a new message) is taken at once.
func decideReady(stored *metav1.Condition, obs observation, s streak, th HealthOptions) metav1.Condition {
	observed := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: obs.status, Reason: obs.reason, Message: obs.message}
	if stored == nil {
		return observed
	}
	wasReady := stored.Status == metav1.ConditionTrue
	switch {
	case wasReady && !obs.healthy() && s.count < th.FailureThreshold:
		return keep(stored)
	case !wasReady && obs.healthy() && s.count < th.SuccessThreshold:
		return keep(stored)
	}
	return observed
}

func keep(stored *metav1.Condition) metav1.Condition {
	return metav1.Condition{Type: stored.Type, Status: stored.Status, Reason: stored.Reason, Message: stored.Message}
}

// probeDue says whether a member probed last at last is due again at now,
// or how long until it is. A reconcile triggered by an event between two
// probes must not probe early, or the thresholds would be crossed faster
// than FailureThreshold × Period; a tenth of the period is allowed as slack
// for timers firing a little early.
func probeDue(last, now time.Time, period time.Duration) (bool, time.Duration) {
	if last.IsZero() {
		return true, 0
	}
	next := last.Add(period - period/10)
	if !now.Before(next) {
		return true, 0
	}
	return false, last.Add(period).Sub(now)
}

// healthTracker remembers, per member, when it was probed last and the
// current streak. The Cluster's uid keys the record so that a Cluster
// recreated under the same name starts afresh.
type healthTracker struct {
	mu       sync.Mutex
	clusters map[string]*healthRecord
}

type healthRecord struct {
	uid       types.UID
	lastProbe time.Time
	streak    streak
}

func newHealthTracker() *healthTracker {
	return &healthTracker{clusters: map[string]*healthRecord{}}
}

func (t *healthTracker) record(name string, uid types.UID) *healthRecord {
	r := t.clusters[name]
	if r == nil || r.uid != uid {
		r = &healthRecord{uid: uid}
		t.clusters[name] = r
	}
	return r
}

// due reports whether the member should be probed at now, or how long until.
func (t *healthTracker) due(name string, uid types.UID, now time.Time, period time.Duration) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return probeDue(t.record(name, uid).lastProbe, now, period)
}

// observe records a probe made at now and returns the streak it extends.
func (t *healthTracker) observe(name string, uid types.UID, now time.Time, healthy bool) streak {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.record(name, uid)
	r.lastProbe = now
	r.streak = r.streak.next(healthy)
	return r.streak
}

func (t *healthTracker) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.clusters, name)
}
