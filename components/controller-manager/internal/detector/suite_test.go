package detector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/lua"
)

// One API server and one running detector for the package's integration
// tests; each test works in its own namespace and with its own names.
var (
	testClient   client.Client
	testConfig   *rest.Config
	testDetector *Detector
	testObserver = &observer{}
	noServer     string
)

// eventually bounds every wait for the detector.
const eventually = 90 * time.Second

func TestMain(m *testing.M) { os.Exit(runWithAPIServer(m)) }

func runWithAPIServer(m *testing.M) int {
	// Quiet by default; FLOTILLA_TEST_LOG=<verbosity> shows the detector's logs.
	if v := os.Getenv("FLOTILLA_TEST_LOG"); v != "" {
		level, _ := strconv.Atoi(v)
		ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(level))))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, policyv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	server, err := controllertest.StartAPIServer(scheme)
	if errors.Is(err, controllertest.ErrNoBinaries) {
		noServer = err.Error()
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := server.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
		}
	}()
	cfg := server.Config
	testConfig = cfg
	testClient = server.Client
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	interp, err := interpreter.NewStatic(lua.New(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testDetector, err = SetupWithManager(mgr, Options{Interpreter: interp, Workers: 4}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testDetector.observe = testObserver.record
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// needServer skips an integration test when the binaries are missing.
func needServer(t *testing.T) {
	t.Helper()
	if noServer != "" {
		t.Fatal(noServer)
	}
}

// observer records when each template was last reconciled, so a test can
// wait for a reconcile that saw a given state: that is how it shows that
// something did not happen without waiting for a while.
type observer struct {
	mu   sync.Mutex
	last map[templateKey]observed
}

type observed struct {
	started time.Time
	err     error
}

func (o *observer) record(key templateKey, started time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = map[templateKey]observed{}
	}
	if prev, ok := o.last[key]; !ok || started.After(prev.started) {
		o.last[key] = observed{started: started, err: err}
	}
}

// reconciledSince reports whether a reconcile of key started after t has
// ended, and its error.
func (o *observer) reconciledSince(key templateKey, t time.Time) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob, ok := o.last[key]
	return ok && ob.started.After(t), ob.err
}

// resync waits until the template of key is in the detector's cache, then
// queues key and waits for a reconcile of it that started after everything
// the test did so far, returning its error.
func resync(t *testing.T, key templateKey) error {
	t.Helper()
	waitFor(t, key.String()+" is in the detector's cache", func(context.Context) (bool, error) {
		ti := testDetector.informers.get(key.GVR)
		if ti == nil {
			return false, nil
		}
		_, ok, err := ti.informer.GetIndexer().GetByKey(key.storeKey())
		return ok, err
	})
	since := time.Now()
	testDetector.queue.Add(key)
	var last error
	waitFor(t, "the detector reconciles "+key.String(), func(context.Context) (bool, error) {
		ok, err := testObserver.reconciledSince(key, since)
		last = err
		return ok, nil
	})
	return last
}

// waitFor polls cond until it holds, failing the test after eventually.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting until %s: %v (last error: %v)", what, err, last)
	}
}

// hasEvent reports whether an event with reason was recorded on the object
// called name in namespace.
func hasEvent(ctx context.Context, namespace, name, reason string) (bool, error) {
	var list corev1.EventList
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": name, "reason": reason})
	if err := testClient.List(ctx, &list, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return false, err
	}
	return len(list.Items) > 0, nil
}
