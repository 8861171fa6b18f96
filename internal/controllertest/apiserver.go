package controllertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-logr/logr"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ErrNoBinaries is returned by StartAPIServer when neither KUBEBUILDER_ASSETS
// nor the repository's bin/k8s holds a kube-apiserver.
var ErrNoBinaries = errors.New("KUBEBUILDER_ASSETS is not set and bin/k8s/v1.37.2 has no kube-apiserver: run `make k8s-binaries`")

// APIServer is one envtest API server serving Flotilla's CRDs, shared by the
// integration tests of a package (start it in TestMain).
type APIServer struct {
	// Config authenticates as an administrator; QPS limits are lifted so
	// that the client never throttles a test.
	Config *rest.Config
	// Client reads and writes with the scheme StartAPIServer was given.
	Client client.Client
	env    *envtest.Environment
}

// StartAPIServer starts an API server with every CRD of config/crd/bases plus
// extra ones. Without KUBEBUILDER_ASSETS it uses the repository's
// bin/k8s/v1.37.2, so plain `go test` works after `make k8s-binaries`.
func StartAPIServer(scheme *kruntime.Scheme, extra ...*apiextensionsv1.CustomResourceDefinition) (*APIServer, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		dir := filepath.Join(root, "bin", "k8s", "v1.37.2")
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
			return nil, ErrNoBinaries
		}
		if err := os.Setenv("KUBEBUILDER_ASSETS", dir); err != nil {
			return nil, err
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		CRDs:                  extra,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the API server: %w", err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("building a client: %w", err)
	}
	return &APIServer{Config: cfg, Client: c, env: env}, nil
}

// Stop stops the API server and its etcd.
func (s *APIServer) Stop() error { return s.env.Stop() }

// repoRoot is found from this file's location, so it is right whichever
// package's tests call StartAPIServer.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locating the repository root")
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

// Main runs a package's tests against one API server serving scheme's
// types (NewScheme's when nil), which it puts in *server for them, and
// stops it after: call it from TestMain as
// os.Exit(controllertest.Main(m, &server, nil)).
func Main(m *testing.M, server **APIServer, scheme *kruntime.Scheme) int {
	ctrl.SetLogger(logr.Discard())
	if scheme == nil {
		var err error
		if scheme, err = NewScheme(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	s, err := StartAPIServer(scheme)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = s.Stop() }()
	*server = s
	return m.Run()
}
