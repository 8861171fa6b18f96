package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/names"
)

// templateReplicas is every template's replica count: Duplicated gives each
// of the 3 members 3, Divided 1:1:1 gives each 1.
const templateReplicas = 3

// creators is how many templates are created at once: a bulk apply.
const creators = 16

// scenario is one propagation run.
type scenario struct {
	strategy  policyv1alpha1.ReplicaSchedulingType
	templates int
	// profiled runs are profiled when -bench.profile-dir asks for it.
	profiled bool
}

// memberReplicas is what each member's copy of a template must ask for.
func (s scenario) memberReplicas(members int) int32 {
	if s.strategy == policyv1alpha1.ReplicaSchedulingTypeDivided {
		return int32(templateReplicas / members)
	}
	return templateReplicas
}

// result is what a run measured.
type result struct {
	templates, memberObjects int
	// elapsed runs from the first template's creation to the last member
	// object's arrival.
	elapsed time.Duration
	// latencies, one per member object, from its template's creation to its
	// arrival with the scheduled replicas, sorted.
	latencies []time.Duration
	// cm, sched and apiserver are CPU time used during the run, and peak RSS.
	cm, sched, apiserver usage
	// peakReset says whether the peaks are the run's own or the process
	// lifetime's.
	peakReset bool
	writes    writeCounts
	// memberWrites are the members' requests, summed over members.
	memberWrites writeCounts
	// cpu is every process's CPU time during the run, by role.
	cpu cpuByRole
	// deleteElapsed and deleteCPU are the cleanup's: from deleting the
	// namespace in the control plane until it is gone there and its
	// Deployments from every member.
	deleteElapsed time.Duration
	deleteCPU     cpuByRole
	// machineCPU and deleteMachineCPU are the whole machine's CPU time
	// less the benchmark's own, over the run and over the cleanup.
	machineCPU, deleteMachineCPU time.Duration
	deleteWrites                 writeCounts
	// settled is how long after the last arrival the control plane's
	// writes stopped.
	settled time.Duration
}

func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies))*p+0.5) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

var namespaceSeq atomic.Int32

// propagate runs s in a fresh namespace: a PropagationPolicy, then all the
// templates at once; it waits until every member holds every template with
// the scheduled replicas, measures, and removes everything again, waiting
// until the members are empty. It fails tb if a template does not arrive.
func (e *env) propagate(tb testing.TB, s scenario, timer func(on bool)) result {
	tb.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("bench-%s-%d-%d", strings.ToLower(string(s.strategy)), s.templates, namespaceSeq.Add(1))
	e.createNamespace(tb, ctx, ns)
	defer e.deleteNamespace(tb, ctx, ns)
	if err := e.cp.Create(ctx, e.policy(ns, s)); err != nil {
		tb.Fatalf("creating the PropagationPolicy: %v", err)
	}

	want := s.memberReplicas(len(e.members))
	w := e.watchMembers(tb, ns, want, s.templates)
	defer w.stop()

	peakReset := e.cm.resetPeak() && e.sched.resetPeak()
	before := e.usage(tb)
	cpuBefore, err := e.cpu()
	if err != nil {
		tb.Fatal(err)
	}
	machineBefore, err := machineCPU()
	if err != nil {
		tb.Fatal(err)
	}
	writesBefore, err := scrapeWrites(ctx, e.cpKube)
	if err != nil {
		tb.Fatal(err)
	}
	memberWritesBefore, err := e.scrapeMemberWrites(ctx)
	if err != nil {
		tb.Fatal(err)
	}

	timer(true)
	began := time.Now()
	var prof *profiler
	if s.profiled {
		prof = e.startProfiles(ctx, ns)
	}
	created := e.createTemplates(tb, ctx, ns, s.templates)
	// Generous: a shared 2-core machine propagated 5,000 templates at
	// about 3.5/s, and a slow run is a figure, not a failure.
	deadline := 10*time.Minute + time.Duration(s.templates)*500*time.Millisecond
	if err := e.waitArrivals(ctx, w, deadline); err != nil {
		tb.Fatalf("%v\n%s", err, e.diagnose(ctx, ns, w, s.templates))
	}
	elapsed := w.last().Sub(began)
	timer(false)
	if err := prof.finish(ctx, e, ns); err != nil {
		tb.Errorf("profiling: %v", err)
	}

	// What the arrivals set off (status aggregation, events, which have a
	// write rate of their own) still belongs to this run: the figures are
	// read once the control plane's writes have settled.
	settled := e.settle(ctx, tb)
	after := e.usage(tb)
	cpuAfter, err := e.cpu()
	if err != nil {
		tb.Fatal(err)
	}
	machineAfter, err := machineCPU()
	if err != nil {
		tb.Fatal(err)
	}
	writesAfter, err := scrapeWrites(ctx, e.cpKube)
	if err != nil {
		tb.Fatal(err)
	}
	memberWritesAfter, err := e.scrapeMemberWrites(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	r := result{
		memberWrites:  memberWritesAfter.minus(memberWritesBefore),
		settled:       settled,
		templates:     s.templates,
		memberObjects: s.templates * len(e.members),
		elapsed:       elapsed,
		latencies:     w.latencies(created),
		cm:            usage{cpu: after[0].cpu - before[0].cpu, peakRSS: after[0].peakRSS},
		sched:         usage{cpu: after[1].cpu - before[1].cpu, peakRSS: after[1].peakRSS},
		apiserver:     usage{cpu: after[2].cpu - before[2].cpu, peakRSS: after[2].peakRSS},
		peakReset:     peakReset,
		writes:        writesAfter.minus(writesBefore),
		cpu:           cpuAfter.minus(cpuBefore),
		machineCPU:    machineAfter - machineBefore,
	}
	// The cleanup is measured too: deleting costs the machine about what
	// creating does. The deferred call then finds nothing left.
	deleteBegan := time.Now()
	e.deleteNamespace(tb, ctx, ns)
	r.deleteElapsed = time.Since(deleteBegan)
	cpuDeleted, err := e.cpu()
	if err != nil {
		tb.Fatal(err)
	}
	r.deleteCPU = cpuDeleted.minus(cpuAfter)
	machineDeleted, err := machineCPU()
	if err != nil {
		tb.Fatal(err)
	}
	r.deleteMachineCPU = machineDeleted - machineAfter
	writesDeleted, err := scrapeWrites(ctx, e.cpKube)
	if err != nil {
		tb.Fatal(err)
	}
	r.deleteWrites = writesDeleted.minus(writesAfter)
	// At once: the benchmark's own log only appears after every case.
	fmt.Fprintf(os.Stderr, "%s: %s\n", ns, r.summary())
	return r
}

// settleQuiet is how long the control plane must take no write for a run's
// work to count as done; settleLimit bounds the wait.
const (
	settleQuiet = 3 * time.Second
	settleLimit = 5 * time.Minute
)

// settle waits until the control plane has taken no write for settleQuiet
// (leases aside, which never stop) and returns how long that took.
func (e *env) settle(ctx context.Context, tb testing.TB) time.Duration {
	tb.Helper()
	began := time.Now()
	last, lastChange := -1.0, time.Now()
	for time.Since(began) < settleLimit {
		w, err := scrapeWrites(ctx, e.cpKube)
		if err != nil {
			tb.Fatal(err)
		}
		n := w.withoutLeases().total()
		if n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) >= settleQuiet {
			return lastChange.Sub(began)
		}
		time.Sleep(500 * time.Millisecond)
	}
	tb.Logf("the control plane's writes did not settle within %v", settleLimit)
	return settleLimit
}

// usage reads the controller-manager, the scheduler and the control plane's
// API server, in that order.
func (e *env) usage(tb testing.TB) [3]usage {
	tb.Helper()
	var u [3]usage
	for i, p := range []procStats{e.cm.procStats, e.sched.procStats, e.apiserver} {
		var err error
		if u[i], err = p.read(); err != nil {
			tb.Fatalf("reading /proc: %v (components: %v)", err, e.componentsAlive())
		}
	}
	return u
}

// policy propagates every Deployment of ns to all members, duplicated or
// divided by equal static weights.
func (e *env) policy(ns string, s scenario) *policyv1alpha1.PropagationPolicy {
	members := make([]string, 0, len(e.members))
	weights := make([]policyv1alpha1.StaticClusterWeight, 0, len(e.members))
	for _, m := range e.members {
		members = append(members, m.name)
		weights = append(weights, policyv1alpha1.StaticClusterWeight{
			TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{m.name}},
			Weight:        1,
		})
	}
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: s.strategy}
	if s.strategy == policyv1alpha1.ReplicaSchedulingTypeDivided {
		rs.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceWeighted
		rs.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: weights}
	}
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployments"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: members},
				ReplicaScheduling: rs,
			},
		},
	}
}

// templateName is the i-th template's name.
func templateName(i int) string { return fmt.Sprintf("app-%05d", i) }

// template is the i-th Deployment.
func template(ns string, i int) *appsv1.Deployment {
	name := templateName(i)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](templateReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "registry.example/app:1.0",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
}

// createTemplates creates n templates with a few creators in parallel and
// returns when each creation was sent, by name.
func (e *env) createTemplates(tb testing.TB, ctx context.Context, ns string, n int) map[string]time.Time {
	tb.Helper()
	created := make([]time.Time, n)
	next := atomic.Int64{}
	g, gctx := errgroup.WithContext(ctx)
	for range creators {
		g.Go(func() error {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return nil
				}
				d := template(ns, i)
				created[i] = time.Now()
				if _, err := e.cpKube.AppsV1().Deployments(ns).Create(gctx, d, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating Deployment %s/%s: %w", ns, d.Name, err)
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatal(err)
	}
	byName := make(map[string]time.Time, n)
	for i, t := range created {
		byName[templateName(i)] = t
	}
	return byName
}

// waitArrivals waits until every member object has arrived, the components
// die or the deadline passes.
func (e *env) waitArrivals(ctx context.Context, w *memberWatch, deadline time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("after %v, %d of %d member objects arrived with the scheduled replicas", deadline, w.count(), w.expected)
		case <-tick.C:
			if err := e.componentsAlive(); err != nil {
				return err
			}
		}
	}
}

// diagnose describes a few of the templates that did not arrive: where they
// are missing, and what their bindings say.
func (e *env) diagnose(ctx context.Context, ns string, w *memberWatch, n int) string {
	var b strings.Builder
	missing := w.missing(n, e.members)
	fmt.Fprintf(&b, "%d member objects missing", len(missing))
	for i, m := range missing {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ...")
			break
		}
		fmt.Fprintf(&b, "\n  %s in %s", m.name, m.member)
		if r, ok := w.wrongReplicas(m); ok {
			fmt.Fprintf(&b, " (present with %d replicas)", r)
		}
		var rb workv1alpha2.ResourceBinding
		key := client.ObjectKey{Namespace: ns, Name: names.Binding(m.name, "Deployment")}
		if err := e.cp.Get(ctx, key, &rb); err != nil {
			fmt.Fprintf(&b, ": binding: %v", err)
			continue
		}
		fmt.Fprintf(&b, ": binding clusters %v, conditions", rb.Spec.Clusters)
		for _, c := range rb.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}

// createNamespace creates ns and waits until the controller-manager has
// created it in every member, so that the run starts with the members ready
// for its objects.
func (e *env) createNamespace(tb testing.TB, ctx context.Context, ns string) {
	tb.Helper()
	if err := e.cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		tb.Fatalf("creating namespace %s: %v", ns, err)
	}
	for _, m := range e.members {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := m.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			tb.Fatalf("namespace %s did not reach %s: %v (components: %v)", ns, m.name, err, e.componentsAlive())
		}
	}
}

// deleteNamespace deletes ns in the control plane and waits until it is gone
// there and its Deployments are gone from the members, so that the next run
// starts from a quiet federation. The members keep the namespace itself: no
// namespace controller runs there to finalise its deletion.
func (e *env) deleteNamespace(tb testing.TB, ctx context.Context, ns string) {
	tb.Helper()
	if err := e.cp.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreNotFound(err) != nil {
		tb.Errorf("deleting namespace %s: %v", ns, err)
		return
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.cp.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			return false, nil
		}
		for _, m := range e.members {
			list, err := m.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil || len(list.Items) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		tb.Errorf("namespace %s not cleaned up from the control plane and the members: %v", ns, err)
	}
}

// memberKey is one template's copy in one member.
type memberKey struct{ member, name string }

// memberWatch follows one namespace's Deployments in every member and notes
// when each first has the scheduled replicas.
type memberWatch struct {
	want     int32
	expected int
	done     chan struct{}
	stopCh   chan struct{}

	mu      sync.Mutex
	arrived map[memberKey]time.Time
	wrong   map[memberKey]int32
}

// watchMembers starts an informer per member on ns and waits for their
// caches to sync.
func (e *env) watchMembers(tb testing.TB, ns string, want int32, templates int) *memberWatch {
	tb.Helper()
	w := &memberWatch{
		want:     want,
		expected: templates * len(e.members),
		done:     make(chan struct{}),
		stopCh:   make(chan struct{}),
		arrived:  make(map[memberKey]time.Time, templates*len(e.members)),
		wrong:    map[memberKey]int32{},
	}
	synced := make([]cache.InformerSynced, 0, len(e.members))
	for _, m := range e.members {
		lw := cache.NewListWatchFromClient(m.kube.AppsV1().RESTClient(), "deployments", ns, fields.Everything())
		inf := cache.NewSharedIndexInformer(lw, &appsv1.Deployment{}, 0, cache.Indexers{})
		// Only the name and the replicas are looked at.
		if err := inf.SetTransform(func(obj any) (any, error) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				return &appsv1.Deployment{
					ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name, ResourceVersion: d.ResourceVersion},
					Spec:       appsv1.DeploymentSpec{Replicas: d.Spec.Replicas},
				}, nil
			}
			return obj, nil
		}); err != nil {
			tb.Fatal(err)
		}
		member := m.name
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.observe(member, obj) },
			UpdateFunc: func(_, obj any) { w.observe(member, obj) },
		})
		if err != nil {
			tb.Fatal(err)
		}
		go inf.Run(w.stopCh)
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(w.stopCh, synced...) {
		tb.Fatal("member informers did not sync")
	}
	return w
}

func (w *memberWatch) observe(member string, obj any) {
	now := time.Now()
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return
	}
	key := memberKey{member: member, name: d.Name}
	replicas := ptr.Deref(d.Spec.Replicas, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.arrived[key]; seen {
		return
	}
	if replicas != w.want {
		w.wrong[key] = replicas
		return
	}
	delete(w.wrong, key)
	w.arrived[key] = now
	if len(w.arrived) == w.expected {
		close(w.done)
	}
}

func (w *memberWatch) stop() { close(w.stopCh) }

func (w *memberWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.arrived)
}

// last is when the last member object arrived.
func (w *memberWatch) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, t := range w.arrived {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// latencies are the arrival times less their template's creation, sorted.
func (w *memberWatch) latencies(created map[string]time.Time) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := make([]time.Duration, 0, len(w.arrived))
	for k, t := range w.arrived {
		l = append(l, t.Sub(created[k.name]))
	}
	slices.Sort(l)
	return l
}

// missing lists the member objects that have not arrived, in order.
func (w *memberWatch) missing(templates int, members []memberClient) []memberKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keys []memberKey
	for i := range templates {
		for _, m := range members {
			k := memberKey{member: m.name, name: templateName(i)}
			if _, ok := w.arrived[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].name < keys[j].name || keys[i].name == keys[j].name && keys[i].member < keys[j].member
	})
	return keys
}

func (w *memberWatch) wrongReplicas(k memberKey) (int32, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.wrong[k]
	return r, ok
}
