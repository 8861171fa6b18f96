// Package eventrecorder records events.k8s.io/v1 Events with bounded memory
// and a write rate of their own.
//
// client-go's events broadcaster starts a goroutine per event and keeps every
// event for six minutes to detect series. A federation propagating thousands
// of templates records tens of events per template: that is hundreds of
// megabytes held, and event writes competing with the controllers' own for
// the API server. Here events wait in a bounded queue, are written by a few
// workers under their own QPS and burst (as the kubelet's --event-qps), and
// are dropped, counted and logged when the queue is full: events are
// best-effort, the objects' status is not. Repeats of an event within a
// window become a series (count and lastObservedTime), tracked in an LRU of
// bounded size.
package eventrecorder

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of every Broadcaster in the process, on the controller-runtime
// metrics endpoint: dropped events are the sign that --event-qps is too low
// for the load, or the control plane too slow.
var (
	droppedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_events_dropped_total",
		Help: "Events not recorded because the event queue was full.",
	})
	writtenTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flotilla_events_written_total",
		Help: "Event writes (creates and series updates) that reached the API server.",
	})
)

func init() {
	metrics.Registry.MustRegister(droppedTotal, writtenTotal)
}

// Defaults of Options.
const (
	DefaultQPS          = 50
	DefaultBurst        = 100
	DefaultQueueSize    = 2000
	DefaultWorkers      = 8
	DefaultSeriesWindow = 10 * time.Minute
	DefaultSeriesCache  = 4096
)

const (
	// maxNote: events.k8s.io/v1 refuses notes of 1 kB or more.
	maxNote = 1023
	// writeAttempts bounds the writes of one event while the API server
	// does not answer.
	writeAttempts = 3
	retryWait     = 500 * time.Millisecond
	// dropLogPeriod spaces the log lines about dropped events.
	dropLogPeriod = 10 * time.Second
)

// Options configures a Broadcaster. Zero fields take the defaults.
type Options struct {
	// QPS and Burst bound event writes to the API server.
	QPS   float32
	Burst int
	// QueueSize is how many event writes may wait; more are dropped.
	QueueSize int
	// Workers write events concurrently.
	Workers int
	// SeriesWindow: a repeat within it counts towards the first event's
	// series instead of making a new Event.
	SeriesWindow time.Duration
	// SeriesCache bounds the events remembered for series.
	SeriesCache int
}

func (o Options) withDefaults() Options {
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.SeriesWindow <= 0 {
		o.SeriesWindow = DefaultSeriesWindow
	}
	if o.SeriesCache <= 0 {
		o.SeriesCache = DefaultSeriesCache
	}
	return o
}

// Broadcaster writes the events of its recorders. Start runs its workers.
type Broadcaster struct {
	client   eventsclient.EventsV1Interface
	scheme   *runtime.Scheme
	opts     Options
	hostname string
	now      func() time.Time

	queue   chan *entry
	dropped atomic.Int64
	written atomic.Int64

	mu     sync.Mutex
	recent *lru.Cache // seriesKey -> *entry
	seed   maphash.Seed
}

// New returns a Broadcaster writing through a client of cfg with the
// options' own rate limit; scheme resolves the kinds of typed objects.
func New(cfg *rest.Config, scheme *runtime.Scheme, opts Options) (*Broadcaster, error) {
	opts = opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	cfg.RateLimiter = nil
	// Events are most of a federation's writes (tens per template), and a
	// built-in kind: in protobuf the API server decodes and stores them
	// without the JSON round trips, as the kubelet's events do.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := eventsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	return newBroadcaster(client, scheme, opts), nil
}

func newBroadcaster(client eventsclient.EventsV1Interface, scheme *runtime.Scheme, opts Options) *Broadcaster {
	hostname, _ := os.Hostname()
	return &Broadcaster{
		client:   client,
		scheme:   scheme,
		opts:     opts,
		hostname: hostname,
		now:      time.Now,
		queue:    make(chan *entry, opts.QueueSize),
		recent:   lru.New(opts.SeriesCache),
		seed:     maphash.MakeSeed(),
	}
}

// Dropped is how many event writes were dropped because the queue was full.
func (b *Broadcaster) Dropped() int64 { return b.dropped.Load() }

// Written is how many event writes reached the API server.
func (b *Broadcaster) Written() int64 { return b.written.Load() }

// Start writes queued events until ctx ends; it implements
// controller-runtime's manager.Runnable.
func (b *Broadcaster) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range b.opts.Workers {
		wg.Go(func() { b.work(ctx) })
	}
	wg.Go(func() { b.reportDrops(ctx) })
	wg.Wait()
	return nil
}

// NeedLeaderElection: every replica may record events.
func (b *Broadcaster) NeedLeaderElection() bool { return false }

// NewRecorder returns a recorder whose events name controller as their
// reporting controller.
func (b *Broadcaster) NewRecorder(controller string) events.EventRecorder {
	return &recorder{b: b, controller: controller, instance: truncate(controller+"-"+b.hostname, 128)}
}

// seriesKey is a hash of what makes events isomorphic (repeats of one
// another): regarding and related objects, type, reason, action, note and
// reporting instance. The cache keeps thousands of entries, so it holds a
// hash rather than a second copy of those fields; the entry's event is
// compared on a hit.
type seriesKey uint64

func (b *Broadcaster) seriesKey(e *eventsv1.Event) seriesKey {
	var h maphash.Hash
	h.SetSeed(b.seed)
	writeRef := func(ref *corev1.ObjectReference) {
		if ref == nil {
			h.WriteByte(0)
			return
		}
		for _, f := range []string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, string(ref.UID), ref.FieldPath} {
			h.WriteString(f)
			h.WriteByte(0)
		}
	}
	writeRef(&e.Regarding)
	writeRef(e.Related)
	for _, f := range []string{e.Type, e.Reason, e.Action, e.Note, e.ReportingInstance} {
		h.WriteString(f)
		h.WriteByte(0)
	}
	return seriesKey(h.Sum64())
}

// isomorphic: a and b are repeats of one another.
func isomorphic(a, b *eventsv1.Event) bool {
	sameRef := func(x, y *corev1.ObjectReference) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.APIVersion == y.APIVersion && x.Kind == y.Kind && x.Namespace == y.Namespace &&
			x.Name == y.Name && x.UID == y.UID && x.FieldPath == y.FieldPath
	}
	return sameRef(&a.Regarding, &b.Regarding) && sameRef(a.Related, b.Related) && a.Type == b.Type &&
		a.Reason == b.Reason && a.Action == b.Action && a.Note == b.Note && a.ReportingInstance == b.ReportingInstance
}

// entry is one Event: written, or waiting to be.
type entry struct {
	// writing serialises the writes of the entry, so that a later write
	// always carries the later count.
	writing sync.Mutex
	// guarded by Broadcaster.mu
	event   *eventsv1.Event
	count   int32
	first   time.Time
	last    time.Time
	created bool
	queued  bool
}

type recorder struct {
	b                    *Broadcaster
	controller, instance string
}

func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b := r.b
	regardingRef, err := reference.GetReference(b.scheme, regarding)
	if err != nil {
		ctrl.Log.WithName("events").Error(err, "Not recording an event: no reference to its object", "reason", reason)
		return
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		if relatedRef, err = reference.GetReference(b.scheme, related); err != nil {
			relatedRef = nil
		}
	}
	note = truncate(fmt.Sprintf(note, args...), maxNote)
	now := b.now()
	namespace := regardingRef.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	event := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *regardingRef,
		Related:             relatedRef,
		Note:                note,
		Type:                eventtype,
	}
	k := b.seriesKey(event)

	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.recent.Get(k); ok {
		e := v.(*entry)
		if now.Sub(e.first) < b.opts.SeriesWindow && isomorphic(e.event, event) {
			e.count++
			e.last = now
			b.enqueueLocked(e)
			return
		}
	}
	event.Name = eventName(regardingRef.Name, now)
	e := &entry{count: 1, first: now, last: now, event: event}
	b.recent.Add(k, e)
	b.enqueueLocked(e)
}

// enqueueLocked queues a write of e unless one already waits, which will
// carry the latest count; a full queue drops it.
func (b *Broadcaster) enqueueLocked(e *entry) {
	if e.queued {
		return
	}
	select {
	case b.queue <- e:
		e.queued = true
	default:
		b.dropped.Add(1)
		droppedTotal.Inc()
	}
}

func (b *Broadcaster) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-b.queue:
			b.write(ctx, e)
		}
	}
}

// write creates the Event, or patches its series when it exists already.
func (b *Broadcaster) write(ctx context.Context, e *entry) {
	e.writing.Lock()
	defer e.writing.Unlock()
	b.mu.Lock()
	e.queued = false
	event := e.event.DeepCopy()
	created := e.created
	if e.count > 1 {
		event.Series = &eventsv1.EventSeries{Count: e.count, LastObservedTime: metav1.NewMicroTime(e.last)}
	}
	b.mu.Unlock()

	var err error
	for attempt := 1; attempt <= writeAttempts; attempt++ {
		if created {
			err = b.patchSeries(ctx, event)
			if apierrors.IsNotFound(err) {
				// Deleted meanwhile (TTL): write it anew.
				created = false
			}
		}
		if !created {
			_, err = b.client.Events(event.Namespace).Create(ctx, event, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				// An earlier write of this entry got there first.
				err = b.patchSeries(ctx, event)
			}
		}
		if err == nil || !retryable(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryWait):
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			ctrl.Log.WithName("events").Error(err, "Writing event", "object", event.Regarding.Name, "reason", event.Reason)
		}
		return
	}
	b.written.Add(1)
	writtenTotal.Inc()
	b.mu.Lock()
	e.created = true
	b.mu.Unlock()
}

func (b *Broadcaster) patchSeries(ctx context.Context, event *eventsv1.Event) error {
	if event.Series == nil {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"series": event.Series})
	if err != nil {
		return err
	}
	_, err = b.client.Events(event.Namespace).Patch(ctx, event.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// retryable: the API server may take the event later. Anything it refused
// on its merits is not retried.
func retryable(err error) bool {
	return !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) &&
		!apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err)
}

// reportDrops logs, now and then, how many events were dropped.
func (b *Broadcaster) reportDrops(ctx context.Context) {
	tick := time.NewTicker(dropLogPeriod)
	defer tick.Stop()
	var reported int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if d := b.dropped.Load(); d > reported {
				ctrl.Log.WithName("events").Info("Dropped events: the event queue was full", "dropped", d-reported, "droppedTotal", d)
				reported = d
			}
		}
	}
}

// truncate cuts s to at most limit bytes on a character boundary.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// eventName names an event about the object called name, recorded at now:
// "<name>.<nanoseconds in hex>", as client-go names them. An event's name
// must be a DNS subdomain while an object's need not be (RBAC objects such
// as system:controller:foo), so such a name is first made into one: lower
// case, every other character a dot, labels trimmed of dashes, cut to fit.
// Regarding.Name keeps the real name.
func eventName(name string, now time.Time) string {
	suffix := fmt.Sprintf(".%x", now.UnixNano())
	limit := validation.DNS1123SubdomainMaxLength - len(suffix)
	if len(name) <= limit && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name + suffix
	}
	mapped := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '.'
	}, name)
	var labels []string
	for label := range strings.SplitSeq(mapped, ".") {
		if label = strings.Trim(label, "-"); label != "" {
			labels = append(labels, label)
		}
	}
	base := strings.Join(labels, ".")
	if len(base) > limit {
		base = strings.TrimRight(base[:limit], ".-")
	}
	if base == "" {
		base = "event"
	}
	return base + suffix
}
