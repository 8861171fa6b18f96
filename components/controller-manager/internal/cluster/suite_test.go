package cluster_test

import (
	"context"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// One federation with one member for the package.
var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      1,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// env is what a test needs: the federation, a control-plane client that
// knows Works, and a running cluster controller.
type env struct {
	fed    *localfed.Federation
	client client.Client
}

// start runs the cluster controller in its own manager until the test ends.
func start(t *testing.T, health cluster.HealthOptions) *env {
	t.Helper()
	f := fed.Get(t)
	e := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		return (&cluster.Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder(cluster.ControllerName),
			Members:   e.Members,
			Informers: e.Informers,
			Health:    health,
		}).SetupWithManager(mgr)
	})
	return &env{fed: f, client: e.Client}
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	controllertest.WaitFor(t, what, cond)
}

func hasEvent(ctx context.Context, c client.Client, name, reason string) (bool, error) {
	return controllertest.HasEvent(ctx, c, name, reason)
}
