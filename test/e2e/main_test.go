// Package e2e runs whole paths — template and policy in, objects and status in
// members out — on one local federation of real API servers with the
// controller-manager and scheduler running in-process. The scenarios share the
// federation and run in parallel where they touch different objects.
package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// fed is the federation every scenario runs on; cp is a client of its
// control plane that knows Flotilla's types.
var (
	fed *localfed.Federation
	cp  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 0})
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), logger))
	defer cancel()

	workDir, err := os.MkdirTemp("", "flotilla-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fed, err = localfed.Start(ctx, localfed.Options{Members: 3, WorkDir: workDir, StartTimeout: 5 * time.Minute})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local federation: %v\n", err)
		return 1
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if cp, err = client.New(fed.ControlPlane.Config, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	components, stopComponents := startComponents(ctx)
	code := m.Run()
	stopComponents()
	if err := <-components; err != nil {
		fmt.Fprintf(os.Stderr, "components: %v\n", err)
		code = 1
	}
	if err := fed.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the local federation: %v\n", err)
		code = 1
	}
	if code == 0 {
		_ = os.RemoveAll(workDir)
	} else {
		fmt.Fprintf(os.Stderr, "local federation kept in %s; logs in %s\n", workDir, fed.LogDir())
	}
	return code
}

// startComponents runs the controller-manager and the scheduler against the
// control plane, as flotillactl local up does, until stop is called.
func startComponents(parent context.Context) (<-chan error, func()) {
	ctx, stop := context.WithCancel(parent)
	logger := log.FromContext(parent)
	cm, err := cmapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-status-update-frequency=2s", "--cluster-health-probe-period=2s")
	if err != nil {
		panic(err)
	}
	sched, err := schedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 2)
	go func() { done <- cmapp.Run(ctx, fed.ControlPlane.Config, cm, logger.WithName("controller-manager")) }()
	go func() { done <- schedapp.Run(ctx, fed.ControlPlane.Config, sched, logger.WithName("scheduler")) }()
	result := make(chan error, 1)
	go func() { result <- errors.Join(<-done, <-done) }()
	return result, stop
}
