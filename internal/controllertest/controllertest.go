// Package controllertest runs the controller-manager's controllers against a
// local federation in integration tests: a manager per test, wired as
// cmd/main.go wires it, and polling helpers.
package controllertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// Eventually bounds every wait for a controller.
const Eventually = 90 * time.Second

// Scheme is NewScheme for a test, failing it on error.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// Env is a running manager and what its controllers share.
type Env struct {
	// Client reads the control plane directly (no cache).
	Client    client.Client
	Members   *membercluster.ClientCache
	Informers *membercluster.InformerManager
}

// Start runs a manager on the control plane at cfg until the test ends;
// setup adds the controllers under test.
func Start(t *testing.T, cfg *rest.Config, setup func(ctrl.Manager, *Env) error) *Env {
	t.Helper()
	// The manager's event broadcaster and some informers log after the test
	// has ended, when logging through t panics; so everything goes to stderr.
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{})
	ctrl.SetLogger(logger)
	scheme := Scheme(t)
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Logger: logger,
		// As the controller-manager caches: Works packed.
		Cache:                  workcache.Options(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every test starts its own manager with the same controllers.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: cl, Members: membercluster.NewClientCache(mgr.GetClient(), scheme, membercluster.Options{})}
	env.Informers = membercluster.NewInformerManager(env.Members, logger.WithName("member-informers"))
	if err := mgr.Add(env.Informers); err != nil {
		t.Fatal(err)
	}
	if err := setup(mgr, env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return env
}

// WaitFor polls cond until it holds, failing the test after Eventually. It
// does not use t.Context(), so that cleanups can wait too. An error from
// cond is kept for the failure message and polling goes on.
func WaitFor(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, Eventually, true, func(ctx context.Context) (bool, error) {
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

// HasEvent reports whether an event with reason was recorded on the
// cluster-scoped object called name.
func HasEvent(ctx context.Context, c client.Client, name, reason string) (bool, error) {
	var list corev1.EventList
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": name, "reason": reason})
	if err := c.List(ctx, &list, client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return false, err
	}
	return len(list.Items) > 0, nil
}
