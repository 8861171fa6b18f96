package cluster

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func ready(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
	return &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: reason, Message: msg}
}

func TestDecideReady(t *testing.T) {
	th := HealthOptions{FailureThreshold: 3, SuccessThreshold: 2}
	storedReady := ready(metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, msgHealthy)
	storedNotReady := ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReady, msgUnhealthy+": 500: etcd failed")
	storedUnreachable := ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReachable, msgNotReachable)
	// What an older version stored for an unreachable member.
	storedUnknown := ready(metav1.ConditionUnknown, clusterv1alpha1.ClusterReasonNotReachable, msgNotReachable+": refused")
	down := observedUnreachable("dial tcp: connection refused")
	sick := observedUnhealthy("500: [-]etcd failed")
	up := observedHealthy()

	tests := []struct {
		name   string
		stored *metav1.Condition
		obs    observation
		streak int
		want   *metav1.Condition
	}{
		{name: "first probe healthy is taken at once", stored: nil, obs: up, streak: 1, want: storedReady},
		{name: "first probe unreachable is taken at once", stored: nil, obs: down, streak: 1, want: storedUnreachable},
		{name: "ready stays ready", stored: storedReady, obs: up, streak: 7, want: storedReady},
		{name: "one failure keeps ready", stored: storedReady, obs: down, streak: 1, want: storedReady},
		{name: "two failures keep ready", stored: storedReady, obs: sick, streak: 2, want: storedReady},
		{name: "third failure flips to not reachable", stored: storedReady, obs: down, streak: 3, want: storedUnreachable},
		{name: "third failure flips to false", stored: storedReady, obs: sick, streak: 3, want: ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReady, sick.message)},
		{name: "not ready to unreachable at once", stored: storedNotReady, obs: down, streak: 4, want: storedUnreachable},
		{name: "unreachable to not ready at once", stored: storedUnreachable, obs: sick, streak: 4, want: ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReady, sick.message)},
		{name: "unreachable stays unreachable", stored: storedUnreachable, obs: down, streak: 9, want: storedUnreachable},
		{name: "a new message is taken at once", stored: storedNotReady, obs: sick, streak: 9, want: ready(metav1.ConditionFalse, clusterv1alpha1.ClusterReasonNotReady, sick.message)},
		{name: "unknown becomes not reachable at once", stored: storedUnknown, obs: down, streak: 1, want: storedUnreachable},
		{name: "one success keeps unknown", stored: storedUnknown, obs: up, streak: 1, want: storedUnknown},
		{name: "one success keeps unreachable", stored: storedUnreachable, obs: up, streak: 1, want: storedUnreachable},
		{name: "second success flips to ready", stored: storedUnreachable, obs: up, streak: 2, want: storedReady},
		{name: "second success flips not ready to ready", stored: storedNotReady, obs: up, streak: 2, want: storedReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideReady(tt.stored, tt.obs, streak{healthy: tt.obs.healthy(), count: tt.streak}, th)
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("decideReady (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreak(t *testing.T) {
	var s streak
	for i, step := range []struct {
		healthy bool
		want    streak
	}{
		{true, streak{true, 1}},
		{true, streak{true, 2}},
		{false, streak{false, 1}},
		{false, streak{false, 2}},
		{false, streak{false, 3}},
		{true, streak{true, 1}},
	} {
		s = s.next(step.healthy)
		if s != step.want {
			t.Fatalf("step %d: streak = %+v, want %+v", i, s, step.want)
		}
	}
}

func TestProbeDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	period := 10 * time.Second
	tests := []struct {
		name     string
		last     time.Time
		now      time.Time
		wantDue  bool
		wantWait time.Duration
	}{
		{name: "never probed", last: time.Time{}, now: t0, wantDue: true},
		{name: "just probed", last: t0, now: t0.Add(time.Second), wantWait: 9 * time.Second},
		{name: "a period later", last: t0, now: t0.Add(period), wantDue: true},
		{name: "timer a little early", last: t0, now: t0.Add(9500 * time.Millisecond), wantDue: true},
		{name: "long ago", last: t0, now: t0.Add(time.Hour), wantDue: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, wait := probeDue(tt.last, tt.now, period)
			if due != tt.wantDue || wait != tt.wantWait {
				t.Errorf("probeDue = %v, %v; want %v, %v", due, wait, tt.wantDue, tt.wantWait)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		body       string
		err        error
		wantStatus metav1.ConditionStatus
		wantReason string
		wantInMsg  string
	}{
		{name: "ok", code: 200, body: "ok", wantStatus: metav1.ConditionTrue, wantReason: clusterv1alpha1.ClusterReasonReady},
		{name: "failing check", code: 500, body: "[-]etcd failed", err: errors.New("internal"), wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.ClusterReasonNotReady, wantInMsg: "500: [-]etcd failed"},
		{name: "revoked token", code: 401, err: errors.New("Unauthorized"), wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.ClusterReasonNotReady, wantInMsg: "401: Unauthorized"},
		{name: "refused", err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.ClusterReasonNotReachable, wantInMsg: "cluster is not reachable"},
		{name: "long body is cut", code: 503, body: strings.Repeat("x", 2000), wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.ClusterReasonNotReady, wantInMsg: "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.code, []byte(tt.body), tt.err)
			if got.status != tt.wantStatus || got.reason != tt.wantReason || !strings.Contains(got.message, tt.wantInMsg) {
				t.Errorf("classify = %+v; want status %s reason %s message containing %q", got, tt.wantStatus, tt.wantReason, tt.wantInMsg)
			}
			if len(got.message) > maxDetail+200 {
				t.Errorf("message of %d bytes is not bounded", len(got.message))
			}
		})
	}
}

// TestProbe runs the probe against fake members over HTTP.
func TestProbe(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{
			name:       "readyz ok",
			handler:    func(w http.ResponseWriter, r *http.Request) { answer(w, r, map[string]int{"/readyz": 200}) },
			wantStatus: metav1.ConditionTrue,
			wantReason: clusterv1alpha1.ClusterReasonReady,
		},
		{
			name:       "no readyz, healthz ok",
			handler:    func(w http.ResponseWriter, r *http.Request) { answer(w, r, map[string]int{"/healthz": 200}) },
			wantStatus: metav1.ConditionTrue,
			wantReason: clusterv1alpha1.ClusterReasonReady,
		},
		{
			name: "readyz failing",
			handler: func(w http.ResponseWriter, r *http.Request) {
				answer(w, r, map[string]int{"/readyz": 500, "/healthz": 200})
			},
			wantStatus: metav1.ConditionFalse,
			wantReason: clusterv1alpha1.ClusterReasonNotReady,
		},
		{
			name:       "hangs past the timeout",
			handler:    func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			wantStatus: metav1.ConditionFalse,
			wantReason: clusterv1alpha1.ClusterReasonNotReachable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			got := probe(t.Context(), restClient(t, srv.URL), 300*time.Millisecond)
			if got.status != tt.wantStatus || got.reason != tt.wantReason {
				t.Errorf("probe = %+v, want status %s reason %s", got, tt.wantStatus, tt.wantReason)
			}
		})
	}

	t.Run("nothing listens", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		got := probe(t.Context(), restClient(t, "http://"+addr), time.Second)
		want := observation{status: metav1.ConditionFalse, reason: clusterv1alpha1.ClusterReasonNotReachable, message: msgNotReachable}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(observation{}), cmpopts.IgnoreFields(observation{}, "detail")); diff != "" {
			t.Errorf("probe (-want +got):\n%s", diff)
		}
		if !strings.Contains(got.detail, "connection refused") {
			t.Errorf("probe detail = %q, want the connection error", got.detail)
		}
	})
}

func answer(w http.ResponseWriter, r *http.Request, codes map[string]int) {
	code, ok := codes[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(code)
	if code == 200 {
		_, _ = w.Write([]byte("ok"))
	} else {
		_, _ = w.Write([]byte("[-]etcd failed"))
	}
}

func restClient(t *testing.T, host string) rest.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return cs.Discovery().RESTClient()
}

func TestDecideLeaseReady(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	grace := 40 * time.Second
	ready := &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: clusterv1alpha1.ClusterReasonReady}
	unknown := &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown, Reason: clusterv1alpha1.ClusterReasonStatusUnknown}
	tests := []struct {
		name        string
		stored      *metav1.Condition
		seen        time.Time
		wantUnknown bool
	}{
		{"renewed just now: the agent's report stands", ready, now, false},
		{"renewed within grace", ready, now.Add(-grace), false},
		{"not renewed for longer than grace", ready, now.Add(-grace - time.Second), true},
		{"never reported, within grace of first sight", nil, now.Add(-time.Second), false},
		{"never reported, grace over", nil, now.Add(-time.Minute), true},
		{"already Unknown for the lease: no write", unknown, now.Add(-time.Hour), false},
	}
	for _, tt := range tests {
		got := decideLeaseReady(tt.stored, tt.seen, now, grace)
		if (got != nil) != tt.wantUnknown {
			t.Errorf("%s: decided %+v, want Unknown: %v", tt.name, got, tt.wantUnknown)
			continue
		}
		if got != nil && (got.Status != metav1.ConditionUnknown || got.Reason != clusterv1alpha1.ClusterReasonStatusUnknown) {
			t.Errorf("%s: decided %+v, want Unknown/%s", tt.name, got, clusterv1alpha1.ClusterReasonStatusUnknown)
		}
	}
}

func TestLeaseTracker(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	renew1, renew2 := start.Add(-time.Hour), start.Add(time.Minute)
	tr := newLeaseTracker()
	steps := []struct {
		name      string
		uid       types.UID
		renewTime time.Time
		now       time.Time
		wantSeen  time.Time
	}{
		{"first sight starts the clock", "a", renew1, start, start},
		{"same renewal later: clock keeps running", "a", renew1, start.Add(time.Minute), start},
		{"a new renewal resets it", "a", renew2, start.Add(2 * time.Minute), start.Add(2 * time.Minute)},
		{"recreated Cluster starts over", "b", renew2, start.Add(3 * time.Minute), start.Add(3 * time.Minute)},
		{"no lease at all: clock from first sight", "b", time.Time{}, start.Add(4 * time.Minute), start.Add(4 * time.Minute)},
		{"still none", "b", time.Time{}, start.Add(5 * time.Minute), start.Add(4 * time.Minute)},
	}
	for _, s := range steps {
		if got := tr.observe("m", s.uid, s.renewTime, s.now); !got.Equal(s.wantSeen) {
			t.Errorf("%s: seen %v, want %v", s.name, got, s.wantSeen)
		}
	}
}
