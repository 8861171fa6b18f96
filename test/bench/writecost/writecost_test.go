package writecost

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

var (
	duration   = flag.Duration("writecost.duration", 10*time.Second, "How long each operation of each case runs.")
	clients    = flag.Int("writecost.clients", 8, "Concurrent clients writing.")
	profileDir = flag.String("writecost.profile-dir", "", "Write a CPU profile of the API server for every case and operation into this directory.")
	only       = flag.String("writecost.settings", "", "Comma-separated settings to run (default: all of them).")
)

// setting is a control plane started with some kube-apiserver flags, and
// the encodings to try on it.
type setting struct {
	name   string
	args   []string
	env    []string
	codecs []codec
	// prepare changes the running control plane before the cases.
	prepare func(ctx context.Context, p *plane) error
}

var settings = []setting{
	{name: "default", codecs: []codec{jsonCodec, protobufCodec}},
	{name: "cbor", args: []string{"--feature-gates=CBORServingAndStorage=true"}, codecs: []codec{jsonCodec, cborCodec}},
	// Each served version of a CRD has a watch cache of its own, which
	// decodes every write and, for a version other than the storage one,
	// converts it (through the conversion webhook for the bindings).
	{name: "bindings-v1alpha2-only", codecs: []codec{jsonCodec}, prepare: serveOnlyStorageVersion(
		"resourcebindings.work.karmada.io", "clusterresourcebindings.work.karmada.io")},
	// Much of a CR write is allocation and garbage collection: a heap
	// allowed to grow further before each collection trades memory for CPU.
	{name: "gogc-200", env: []string{"GOGC=200"}, codecs: []codec{jsonCodec}},
}

// serveOnlyStorageVersion stops serving every version but the storage one
// of the CRDs named.
func serveOnlyStorageVersion(crds ...string) func(ctx context.Context, p *plane) error {
	return func(ctx context.Context, p *plane) error {
		ext, err := apiextensionsclient.NewForConfig(p.fed.ControlPlane.Config)
		if err != nil {
			return err
		}
		for _, name := range crds {
			crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for i := range crd.Spec.Versions {
				crd.Spec.Versions[i].Served = crd.Spec.Versions[i].Storage
			}
			if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("serving only the storage version of %s: %w", name, err)
			}
		}
		// The server drops the versions' storage once it has seen the change.
		return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := p.kube.Discovery().ServerResourcesForGroupVersion("work.karmada.io/v1alpha1")
			if err != nil {
				return false, nil
			}
			list, _ := p.kube.Discovery().ServerResourcesForGroupVersion("work.karmada.io/v1alpha1")
			for _, r := range list.APIResources {
				if r.Name == "resourcebindings" {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// op is one kind of write.
type op string

const (
	opCreate op = "create"
	opUpdate op = "update"
	opStatus op = "status-patch"
	// opApplyCreate and opApplyUpdate are server-side apply (forced, one
	// field manager) of new objects and of changed ones.
	opApplyCreate op = "apply-create"
	opApplyUpdate op = "apply-update"
)

// measurement is one operation of one case.
type measurement struct {
	op         op
	requests   int64
	elapsed    time.Duration
	apiserver  time.Duration
	etcd       time.Duration
	reqBytes   int
	apiProfile string
}

func (m measurement) perSecond() float64 { return float64(m.requests) / m.elapsed.Seconds() }

func perRequestMicros(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// plane is a running control plane under measurement.
type plane struct {
	fed       *localfed.Federation
	rest      rest.Interface
	kube      kubernetes.Interface
	apiserver procfs.Proc
	etcd      procfs.Proc
}

func startPlane(ctx context.Context, tb testing.TB, s setting) *plane {
	tb.Helper()
	fed, err := localfed.Start(ctx, localfed.Options{
		ControlPlaneAPIServerArgs: s.args,
		ControlPlaneAPIServerEnv:  s.env,
		Profiling:                 *profileDir != "",
		WorkDir:                   tb.TempDir(),
	})
	if err != nil {
		tb.Fatalf("starting the control plane (%s): %v", s.name, err)
	}
	tb.Cleanup(func() {
		if err := fed.Close(); err != nil {
			tb.Errorf("stopping the control plane: %v", err)
		}
	})
	p := &plane{fed: fed}
	for _, proc := range fed.Processes() {
		pr, err := procfs.NewProc(proc.PID)
		if err != nil {
			tb.Fatal(err)
		}
		switch {
		case proc.Component == "etcd":
			p.etcd = pr
		case proc.Cluster == localfed.ControlPlaneName && proc.Component == "kube-apiserver":
			p.apiserver = pr
		}
	}
	if p.apiserver.PID == 0 || p.etcd.PID == 0 {
		tb.Fatalf("no kube-apiserver or etcd among %v", fed.Processes())
	}
	cfg := rest.CopyConfig(fed.ControlPlane.Config)
	// The server's rate is measured, not the client's.
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	p.kube, p.rest = kube, kube.Discovery().RESTClient()
	if s.prepare != nil {
		if err := s.prepare(ctx, p); err != nil {
			tb.Fatalf("preparing the control plane (%s): %v", s.name, err)
		}
	}
	return p
}

func cpuOf(tb testing.TB, p procfs.Proc) time.Duration {
	tb.Helper()
	st, err := p.Stat()
	if err != nil {
		tb.Fatalf("reading /proc/%d/stat: %v", p.PID, err)
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// runCase measures create, update and status patch of k in c on p, in a
// namespace of its own, deleted afterwards.
func (p *plane) runCase(ctx context.Context, tb testing.TB, name string, k kind, c codec) []measurement {
	tb.Helper()
	ns := "wc-" + strings.ToLower(strings.NewReplacer("~", "-", "/", "-").Replace(name))
	if _, err := p.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("creating namespace %s: %v", ns, err)
	}
	defer p.deleteNamespace(ctx, tb, ns)

	var objects sync.Map // index -> *unstructured.Unstructured, as last written
	var out []measurement
	var next atomic.Int64

	create := func(ctx context.Context, _ int) (int, error) {
		i := int(next.Add(1) - 1)
		obj := k.object(ns, i)
		body, err := c.encode(obj)
		if err != nil {
			return 0, err
		}
		resp, err := p.rest.Post().AbsPath(collectionPath(k, ns)).
			SetHeader("Content-Type", c.contentType).SetHeader("Accept", c.contentType).
			Body(body).DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("creating %s %d: %w", k.name, i, err)
		}
		created, err := c.decode(resp)
		if err != nil {
			return 0, fmt.Errorf("decoding the created %s: %w", k.name, err)
		}
		objects.Store(i, created)
		return len(body), nil
	}
	out = append(out, p.measure(ctx, tb, name, opCreate, create))
	total := int(next.Load())
	if total < *clients {
		tb.Fatalf("%s: only %d objects created", name, total)
	}

	// Each client owns the objects whose index it is congruent to, so that
	// updates never conflict.
	rounds := make([]atomic.Int64, *clients)
	update := func(ctx context.Context, client int) (int, error) {
		n := int(rounds[client].Add(1) - 1)
		i := client + (n*(*clients))%(total-total%*clients)
		v, _ := objects.Load(i)
		obj := v.(*unstructured.Unstructured)
		k.change(obj, n+1)
		body, err := c.encode(obj)
		if err != nil {
			return 0, err
		}
		resp, err := p.rest.Put().AbsPath(collectionPath(k, ns), obj.GetName()).
			SetHeader("Content-Type", c.contentType).SetHeader("Accept", c.contentType).
			Body(body).DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("updating %s %d: %w", k.name, i, err)
		}
		updated, err := c.decode(resp)
		if err != nil {
			return 0, fmt.Errorf("decoding the updated %s: %w", k.name, err)
		}
		objects.Store(i, updated)
		return len(body), nil
	}
	out = append(out, p.measure(ctx, tb, name, opUpdate, update))

	if k.statusPatch != nil {
		for i := range rounds {
			rounds[i].Store(0)
		}
		status := func(ctx context.Context, client int) (int, error) {
			n := int(rounds[client].Add(1) - 1)
			i := client + (n*(*clients))%(total-total%*clients)
			v, _ := objects.Load(i)
			obj := v.(*unstructured.Unstructured)
			patch := k.statusPatch(n + 1)
			req := p.rest.Patch("application/merge-patch+json").AbsPath(collectionPath(k, ns), obj.GetName())
			if k.gvr != configGVR {
				req = req.SubResource("status")
			}
			if _, err := req.SetHeader("Accept", c.contentType).Body(patch).DoRaw(ctx); err != nil {
				return 0, fmt.Errorf("patching the status of %s %d: %w", k.name, i, err)
			}
			return len(patch), nil
		}
		out = append(out, p.measure(ctx, tb, name, opStatus, status))
	}
	if k.apply {
		out = append(out, p.measureApply(ctx, tb, name, k)...)
	}
	return out
}

// measureApply creates objects by server-side apply, then applies changes
// to them, each client to its own objects.
func (p *plane) measureApply(ctx context.Context, tb testing.TB, name string, k kind) []measurement {
	tb.Helper()
	ns := "wc-" + strings.ToLower(strings.NewReplacer("~", "-", "/", "-").Replace(name)) + "-apply"
	if _, err := p.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("creating namespace %s: %v", ns, err)
	}
	defer p.deleteNamespace(ctx, tb, ns)
	apply := func(ctx context.Context, obj *unstructured.Unstructured) (int, error) {
		body := mustJSON(obj.Object)
		_, err := p.rest.Patch("application/apply-patch+yaml").AbsPath(collectionPath(k, ns), obj.GetName()).
			Param("fieldManager", "execution-controller").Param("force", "true").
			SetHeader("Accept", "application/json").Body(body).DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("applying %s %s: %w", k.name, obj.GetName(), err)
		}
		return len(body), nil
	}
	var next atomic.Int64
	create := func(ctx context.Context, _ int) (int, error) {
		return apply(ctx, k.object(ns, int(next.Add(1)-1)))
	}
	out := []measurement{p.measure(ctx, tb, name, opApplyCreate, create)}
	total := int(next.Load())
	if total < *clients {
		tb.Fatalf("%s: only %d objects applied", name, total)
	}
	rounds := make([]atomic.Int64, *clients)
	update := func(ctx context.Context, client int) (int, error) {
		n := int(rounds[client].Add(1) - 1)
		obj := k.object(ns, client+(n*(*clients))%(total-total%*clients))
		k.change(obj, n+1)
		return apply(ctx, obj)
	}
	return append(out, p.measure(ctx, tb, name, opApplyUpdate, update))
}

// measure runs do from every client until the duration is over and reads
// the processes' CPU time around it.
func (p *plane) measure(ctx context.Context, tb testing.TB, name string, o op, do func(ctx context.Context, client int) (int, error)) measurement {
	tb.Helper()
	var profile chan error
	m := measurement{op: o}
	if *profileDir != "" {
		m.apiProfile = filepath.Join(*profileDir, strings.NewReplacer("/", "_", "~", "-").Replace(name)+"_"+string(o)+"_apiserver.pprof")
		profile = make(chan error, 1)
		go func() { profile <- p.saveProfile(ctx, m.apiProfile) }()
	}
	apiBefore, etcdBefore := cpuOf(tb, p.apiserver), cpuOf(tb, p.etcd)
	began := time.Now()
	deadline := began.Add(*duration)
	var requests, bytes atomic.Int64
	errs := make(chan error, *clients)
	var wg sync.WaitGroup
	for client := range *clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				n, err := do(ctx, client)
				if err != nil {
					errs <- err
					return
				}
				requests.Add(1)
				bytes.Add(int64(n))
			}
		})
	}
	wg.Wait()
	m.elapsed = time.Since(began)
	m.apiserver = cpuOf(tb, p.apiserver) - apiBefore
	m.etcd = cpuOf(tb, p.etcd) - etcdBefore
	m.requests = requests.Load()
	if m.requests > 0 {
		m.reqBytes = int(bytes.Load() / m.requests)
	}
	close(errs)
	for err := range errs {
		tb.Fatalf("%s %s: %v", name, o, err)
	}
	if profile != nil {
		if err := <-profile; err != nil {
			tb.Errorf("profiling %s %s: %v", name, o, err)
		}
	}
	return m
}

func (p *plane) saveProfile(ctx context.Context, path string) error {
	body, err := p.rest.Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(int(duration.Seconds()))).Timeout(*duration + time.Minute).Stream(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = body.Close() }()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// deleteNamespace removes a case's objects, so that the next case runs on
// an empty store. Finalizers the measured objects carry are nobody's here:
// they are removed first.
func (p *plane) deleteNamespace(ctx context.Context, tb testing.TB, ns string) {
	tb.Helper()
	if err := p.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		tb.Errorf("deleting namespace %s: %v", ns, err)
		return
	}
	for _, gvr := range []string{"/apis/work.karmada.io/v1alpha2/namespaces/" + ns + "/resourcebindings", "/apis/work.karmada.io/v1alpha1/namespaces/" + ns + "/works"} {
		list := &unstructured.UnstructuredList{}
		body, err := p.rest.Get().AbsPath(gvr).DoRaw(ctx)
		if err != nil {
			tb.Errorf("listing %s: %v", gvr, err)
			continue
		}
		if err := list.UnmarshalJSON(body); err != nil {
			tb.Errorf("listing %s: %v", gvr, err)
			continue
		}
		for _, item := range list.Items {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if _, err := p.rest.Patch("application/merge-patch+json").AbsPath(gvr, item.GetName()).Body(patch).DoRaw(ctx); err != nil && !apierrors.IsNotFound(err) {
				tb.Errorf("releasing %s/%s: %v", gvr, item.GetName(), err)
			}
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := p.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		tb.Errorf("namespace %s not deleted: %v", ns, err)
	}
}

func collectionPath(k kind, ns string) string {
	if k.gvr.Group == "" {
		return "/api/" + k.gvr.Version + "/namespaces/" + ns + "/" + k.gvr.Resource
	}
	return "/apis/" + k.gvr.Group + "/" + k.gvr.Version + "/namespaces/" + ns + "/" + k.gvr.Resource
}

// cases lists the kinds and codecs of a setting that the server can take.
type testCase struct {
	name  string
	kind  kind
	codec codec
}

func casesOf(s setting) []testCase {
	var out []testCase
	for _, k := range kinds() {
		for _, c := range s.codecs {
			if c.builtinOnly && k.gvr.Group != "" {
				continue
			}
			out = append(out, testCase{name: s.name + "/" + k.name + "/" + c.name, kind: k, codec: c})
		}
	}
	return out
}

func table(name string, ms []measurement) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "  %-58s %-13s %7.0f req/s  apiserver %6.0f µs/req  etcd %5.0f µs/req  %5d B/req",
			name, m.op, m.perSecond(), perRequestMicros(m.apiserver, m.requests), perRequestMicros(m.etcd, m.requests), m.reqBytes)
		if m.apiProfile != "" {
			fmt.Fprintf(&b, "  %s", m.apiProfile)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func selected(s setting) bool {
	if *only == "" {
		return true
	}
	for _, name := range strings.Split(*only, ",") {
		if strings.TrimSpace(name) == s.name {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The webhook's logs would only be noise between the figures.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// BenchmarkWriteCost runs every case of every setting once (b.N is 1: a case
// is a fixed duration of writes).
func BenchmarkWriteCost(b *testing.B) {
	ctx := context.Background()
	for _, s := range settings {
		if !selected(s) {
			continue
		}
		b.Run(s.name, func(b *testing.B) {
			p := startPlane(ctx, b, s)
			costs := map[costKey]measurement{}
			for _, tc := range casesOf(s) {
				b.Run(strings.TrimPrefix(tc.name, s.name+"/"), func(b *testing.B) {
					var ms []measurement
					for range b.N {
						ms = p.runCase(ctx, b, tc.name, tc.kind, tc.codec)
					}
					for _, m := range ms {
						b.ReportMetric(m.perSecond(), string(m.op)+"-req/s")
						b.ReportMetric(perRequestMicros(m.apiserver, m.requests), string(m.op)+"-apiserver-µs/req")
						b.ReportMetric(perRequestMicros(m.etcd, m.requests), string(m.op)+"-etcd-µs/req")
						if tc.codec.name == jsonCodec.name {
							costs[costKey{tc.kind.name, m.op}] = m
						}
					}
					// At once: the benchmark log only appears after every case.
					fmt.Fprint(os.Stderr, table(tc.name, ms))
				})
			}
			b.Run("floor", func(b *testing.B) {
				f, missing := floorOf(costs)
				if len(missing) > 0 {
					b.Fatalf("not measured: %s", strings.Join(missing, ", "))
				}
				b.ReportMetric(millis(f.controlPlane), "floor-cp-apiserver-ms/template")
				b.ReportMetric(millis(f.members), "floor-member-apiservers-ms/template")
				b.ReportMetric(millis(f.etcd), "floor-etcd-ms/template")
				b.ReportMetric(millis(f.total()), "floor-ms/template")
				fmt.Fprint(os.Stderr, floorTable(s.name, f, costs))
			})
		})
	}
}

// TestWriteCost runs each case of the default setting for a moment: the
// figures mean little at that length, but every request is checked to be
// taken, in every encoding.
func TestWriteCost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	if !flagSet("writecost.duration") {
		*duration = 300 * time.Millisecond
	}
	ctx := context.Background()
	p := startPlane(ctx, t, settings[0])
	costs := map[costKey]measurement{}
	for _, tc := range casesOf(settings[0]) {
		ms := p.runCase(ctx, t, tc.name, tc.kind, tc.codec)
		for _, m := range ms {
			if m.requests == 0 {
				t.Errorf("%s %s: no request completed", tc.name, m.op)
			}
			if tc.codec.name == jsonCodec.name {
				costs[costKey{tc.kind.name, m.op}] = m
			}
		}
		t.Log("\n" + table(tc.name, ms))
	}
	// Every write of a propagated template is weighed by some case.
	f, missing := floorOf(costs)
	if len(missing) > 0 {
		t.Errorf("the floor misses writes no case measured: %s", strings.Join(missing, ", "))
	}
	t.Log("\n" + floorTable(settings[0].name, f, costs))
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
