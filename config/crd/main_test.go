package crd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// apiClient talks to the one API server shared by every test in this package;
// it serves all CRDs from bases/.
var apiClient client.Client

func TestMain(m *testing.M) {
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run these tests with `make test` (it builds the Kubernetes binaries into bin/k8s)")
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("bases"), filepath.Join("operator")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
		}
	}()
	apiClient, err = client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "building a client: %v\n", err)
		return 1
	}
	return m.Run()
}

// validationCase is one manifest sent to the API server.
type validationCase struct {
	name     string
	manifest string   // YAML of one object; namespaced objects go to namespace "default"
	wantErr  []string // substrings that must all appear in the rejection; empty means it must be accepted
}

// runValidationCases creates each manifest with a server-side dry run, so the
// schema and CEL rules run for real while nothing is stored and cases never
// collide.
func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatalf("bad test manifest: %v", err)
			}
			namespaced, err := apiClient.IsObjectNamespaced(obj)
			if err != nil {
				t.Fatalf("resolving %s: %v", obj.GroupVersionKind(), err)
			}
			if namespaced && obj.GetNamespace() == "" {
				obj.SetNamespace("default")
			}
			err = apiClient.Create(context.Background(), obj, client.DryRunAll)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("want accepted, got: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want rejected with %q, was accepted", tc.wantErr)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("want a validation error, got: %v", err)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("rejection does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}
