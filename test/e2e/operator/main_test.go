// Package operator proves that the control plane the Flotilla operator
// stands up works. A host cluster — real kube-apiserver,
// kube-controller-manager and kube-scheduler — gets one node served by the
// test node agent (test/nodeagent), which runs the pods the charts render as
// local processes from binaries built here. The operator, in this process,
// turns a Karmada resource into etcd, an API server and the controllers on
// that node; the test then joins two member clusters to it, propagates a
// Deployment, and upgrades the instance by restarting the operator as a
// newer release.
package operator

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/config/crd"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/app"
	"github.com/flotilla-io/flotilla/operator/versions"
	"github.com/flotilla-io/flotilla/test/nodeagent"
)

var (
	fed   *localfed.Federation
	agent *nodeagent.Agent
	// flotillactlBinary is flotillactl built for this run.
	flotillactlBinary string

	// The two releases of the upgrade: the same Kubernetes and etcd, newer
	// Flotilla components.
	oldRelease = versions.Release{Version: "v0.1.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}
	newRelease = versions.Release{Version: "v0.2.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := nodeagent.Supported(); err != nil {
		// Only a machine where the agent cannot run pods (not Linux, not
		// root) gets here; CI runs as root.
		fmt.Fprintln(os.Stderr, "operator e2e needs the node agent:", err)
		return 0
	}
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 0})
	ctrllog.SetLogger(logger)
	ctx, cancel := context.WithCancel(ctrllog.IntoContext(context.Background(), logger))
	defer cancel()

	workDir, err := os.MkdirTemp("", "flotilla-operator-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir, err := localfed.ResolveBinDir("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	images, err := buildImages(ctx, binDir, filepath.Join(workDir, "bin"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	flotillactlBinary = filepath.Join(workDir, "bin", release.Flotillactl.Binary())

	scheme, err := app.Scheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fed, err = localfed.Start(ctx, localfed.Options{Members: 2, Host: true, NoControlPlane: true, Scheme: scheme, WorkDir: filepath.Join(workDir, "fed")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Installing the operator starts with its CRD, as `kubectl apply -k`
	// of config/crd/operator does.
	if err := installOperatorCRD(ctx); err != nil {
		_ = fed.Close()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	agent, err = nodeagent.Start(ctx, nodeagent.Options{
		Host:   fed.Host.Config,
		Dir:    filepath.Join(workDir, "node"),
		Images: images,
		// Room for the operator benchmark's 20 control planes of six pods.
		MaxPods: 300,
		Logger:  logger.WithName("nodeagent"),
	})
	if err != nil {
		_ = fed.Close()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	agent.Stop()
	if err := fed.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		_ = os.RemoveAll(workDir)
	} else {
		fmt.Fprintln(os.Stderr, "logs kept in", workDir)
	}
	return code
}

// buildImages builds Flotilla's components and maps every image of both
// releases to a binary: the node agent's stand-in for pulling an image.
func buildImages(ctx context.Context, kubeBinDir, out string) (map[string]string, error) {
	root := moduleRoot()
	own := map[release.Component]string{
		release.ControllerManager:   "./components/controller-manager/cmd",
		release.Scheduler:           "./components/scheduler/cmd",
		release.Descheduler:         "./components/descheduler/cmd",
		release.Webhook:             "./components/webhook/cmd",
		release.AggregatedAPIServer: "./components/aggregated-apiserver/cmd",
		release.Operator:            "./operator/cmd",
		release.Flotillactl:         "./cmd/flotillactl",
	}
	g, gctx := errgroup.WithContext(ctx)
	for c, pkg := range own {
		g.Go(func() error {
			cmd := exec.CommandContext(gctx, "go", "build", "-o", filepath.Join(out, c.Binary()), pkg)
			cmd.Dir = root
			if b, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("building %s: %w\n%s", pkg, err, b)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	images := map[string]string{}
	for _, r := range []versions.Release{oldRelease, newRelease} {
		for c := range own {
			images[r.Image(c, "")] = filepath.Join(out, c.Binary())
		}
		for _, c := range []release.Component{release.Etcd, release.KubeAPIServer, release.KubeControllerManager} {
			images[r.Image(c, "")] = filepath.Join(kubeBinDir, c.Binary())
		}
	}
	// The newer operator is a build of its own (packaging_test.go).
	return images, buildNextOperator(ctx, root, out, images)
}

// installOperatorCRD creates the Karmada CRD in the host and waits until it
// is served.
func installOperatorCRD(ctx context.Context) error {
	data, err := crd.Operator.ReadFile("operator/operator.karmada.io_karmadas.yaml")
	if err != nil {
		return err
	}
	obj := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, obj); err != nil {
		return err
	}
	cl, err := client.New(fed.Host.Config, client.Options{})
	if err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(cl.Scheme()); err != nil {
		return err
	}
	if err := cl.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating the Karmada CRD: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		for _, c := range obj.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// moduleRoot is the repository's root directory.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
