package eventrecorder

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	cfg  *rest.Config
	kube kubernetes.Interface
)

func TestMain(m *testing.M) {
	env := &envtest.Environment{}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		os.Exit(1)
	}
	kube = kubernetes.NewForConfigOrDie(cfg)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
	}
	os.Exit(code)
}

// namespace creates a namespace of its own for one test.
func namespace(t *testing.T) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "events-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// started returns a running Broadcaster; it stops with the test.
func started(t *testing.T) *Broadcaster {
	t.Helper()
	b, err := New(cfg, clientgoscheme.Scheme, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start(t, b)
	return b
}

func start(t *testing.T, b *Broadcaster) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// eventsOf waits until ns holds want Events and returns them.
func eventsOf(t *testing.T, ns string, want int) []eventsv1.Event {
	t.Helper()
	var items []eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		items = list.Items
		return len(items) == want, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d events in %s: %v (have %d)", want, ns, err, len(items))
	}
	return items
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}}
}

func TestRecordsEvent(t *testing.T) {
	ns := namespace(t)
	b := started(t)
	rec := b.NewRecorder("test-controller")
	rec.Eventf(configMap(ns, "app"), configMap(ns, "other"), corev1.EventTypeNormal, "SyncSucceed", "Sync", "Applied %s to %s", "app", "member1")

	got := eventsOf(t, ns, 1)[0]
	checks := []struct{ field, got, want string }{
		{"reason", got.Reason, "SyncSucceed"},
		{"action", got.Action, "Sync"},
		{"type", got.Type, corev1.EventTypeNormal},
		{"note", got.Note, "Applied app to member1"},
		{"reportingController", got.ReportingController, "test-controller"},
		{"regarding.kind", got.Regarding.Kind, "ConfigMap"},
		{"regarding.name", got.Regarding.Name, "app"},
		{"regarding.uid", string(got.Regarding.UID), "uid-app"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if got.Related == nil || got.Related.Name != "other" {
		t.Errorf("related = %+v, want the ConfigMap other", got.Related)
	}
	if !strings.HasPrefix(got.ReportingInstance, "test-controller-") {
		t.Errorf("reportingInstance %q does not name the controller", got.ReportingInstance)
	}
	if got.Series != nil {
		t.Errorf("a single event has a series: %+v", got.Series)
	}
}

func TestClusterScopedObjectInDefault(t *testing.T) {
	b := started(t)
	name := fmt.Sprintf("node-%d", time.Now().UnixNano())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-node"}}
	b.NewRecorder("test").Eventf(node, nil, corev1.EventTypeWarning, "TaintClusterFailed", "Taint", "no")
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := kube.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				return e.Type == corev1.EventTypeWarning, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no event about %s in default: %v", name, err)
	}
}

func TestRepeatsBecomeASeries(t *testing.T) {
	ns := namespace(t)
	b := started(t)
	rec := b.NewRecorder("test")
	cm := configMap(ns, "app")
	for range 3 {
		rec.Eventf(cm, nil, corev1.EventTypeNormal, "SyncSucceed", "Sync", "same note")
	}
	// A different note is a different event.
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "SyncSucceed", "Sync", "another note")

	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 2 {
			return false, err
		}
		for _, e := range list.Items {
			if e.Note == "same note" {
				return e.Series != nil && e.Series.Count == 3, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("want one Event with a series of 3 and another single one: %v (%v)", err, eventsOf(t, ns, 2))
	}
}

func TestFullQueueDrops(t *testing.T) {
	ns := namespace(t)
	b, err := New(cfg, clientgoscheme.Scheme, Options{QueueSize: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecorder("test")
	droppedBefore := testutil.ToFloat64(droppedTotal)
	// Nothing drains the queue before Start: the third and later are dropped.
	for i := range 5 {
		rec.Eventf(configMap(ns, fmt.Sprintf("app-%d", i)), nil, corev1.EventTypeNormal, "SyncSucceed", "Sync", "n")
	}
	if got := b.Dropped(); got != 3 {
		t.Errorf("Dropped() = %d, want 3", got)
	}
	if got := testutil.ToFloat64(droppedTotal) - droppedBefore; got != 3 {
		t.Errorf("flotilla_events_dropped_total grew by %v, want 3", got)
	}
	start(t, b)
	events := eventsOf(t, ns, 2)
	names := map[string]bool{}
	for _, e := range events {
		names[e.Regarding.Name] = true
	}
	if !names["app-0"] || !names["app-1"] {
		t.Errorf("written events are about %v, want app-0 and app-1, the ones queued", names)
	}
}

func TestLongNoteTruncated(t *testing.T) {
	ns := namespace(t)
	b := started(t)
	long := strings.Repeat("é", 2000) // 4,000 bytes
	b.NewRecorder("test").Eventf(configMap(ns, "app"), nil, corev1.EventTypeWarning, "SyncFailed", "Sync", "%s", long)
	got := eventsOf(t, ns, 1)[0]
	if len(got.Note) >= 1024 || !strings.HasPrefix(long, got.Note) {
		t.Errorf("note of %d bytes, want a prefix of the message under 1 kB", len(got.Note))
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes: not cut in half
		{"ééé", 5, "éé"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.limit); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}

// An object whose name is no DNS subdomain (RBAC's system:... names) still
// gets its events: the event's name is derived, involvedObject.name is the
// object's, as a client watching core/v1 Events sees them.
func TestEventAboutObjectWithColonsInItsName(t *testing.T) {
	b := started(t)
	name := fmt.Sprintf("system:test:role-%d", time.Now().UnixNano())
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-role"}}
	b.NewRecorder("test").Eventf(role, nil, corev1.EventTypeNormal, "SyncSucceed", "Sync", "applied")
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := kube.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
		})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "ClusterRole" && e.Reason == "SyncSucceed" && e.Message == "applied" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no core/v1 Event about ClusterRole %s: %v", name, err)
	}
}

func TestEventName(t *testing.T) {
	now := time.Unix(0, 0x1234)
	long := strings.Repeat("a", 300)
	tests := []struct{ name, want string }{
		{"web", "web.1234"},
		{"my.config-1", "my.config-1.1234"},
		{"system:test:role", "system.test.role.1234"},
		{"system:controller:-foo-", "system.controller.foo.1234"},
		{"Upper_Case", "upper.case.1234"},
		{":::", "event.1234"},
		{long, long[:253-len(".1234")] + ".1234"},
	}
	for _, tt := range tests {
		got := eventName(tt.name, now)
		if got != tt.want {
			t.Errorf("eventName(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("eventName(%q) = %q is no DNS subdomain: %v", tt.name, got, errs)
		}
	}
}
