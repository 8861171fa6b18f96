package bindingstatus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/bindingstatus"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workcache"
	"github.com/flotilla-io/flotilla/lua"
)

// The API server shared by the package's integration tests; nil when the
// Kubernetes binaries are missing.
var (
	apiConfig *rest.Config
	apiClient client.Client
	noServer  string
)

func TestMain(m *testing.M) { os.Exit(runWithAPIServer(m)) }

func runWithAPIServer(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	scheme, err := controllertest.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server, err := controllertest.StartAPIServer(scheme, cloneSetCRD())
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
	apiConfig, apiClient = server.Config, server.Client
	for _, m := range []string{"member1", "member2"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(m)}}
		if err := apiClient.Create(context.Background(), ns); err != nil {
			fmt.Fprintf(os.Stderr, "creating %s: %v\n", ns.Name, err)
			return 1
		}
	}
	return m.Run()
}

// cloneSetCRD serves OpenKruise's CloneSet without a status subresource:
// a kind whose status the bundled Lua aggregates and that is written with
// the object itself.
func cloneSetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "clonesets.apps.kruise.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "apps.kruise.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "clonesets", Singular: "cloneset", Kind: "CloneSet", ListKind: "CloneSetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

// testLogger is quiet unless FLOTILLA_TEST_LOG gives a verbosity. It
// writes to stderr, not through t: the manager's event broadcaster logs
// after a test ends.
func testLogger() logr.Logger {
	v := os.Getenv("FLOTILLA_TEST_LOG")
	if v == "" {
		return logr.Discard()
	}
	level, _ := strconv.Atoi(v)
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: level})
}

func needAPIServer(t *testing.T) {
	t.Helper()
	if apiConfig == nil {
		t.Fatal(noServer)
	}
}

// start runs the binding status controller in its own manager until the
// test ends.
func start(t *testing.T, workers int, grace time.Duration) {
	t.Helper()
	needAPIServer(t)
	scheme, err := controllertest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(apiConfig, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  workcache.Options(),
		Logger:                 testLogger(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	vm := lua.New()
	t.Cleanup(vm.Close)
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &bindingstatus.Reconciler{
		Client:      mgr.GetClient(),
		Templates:   binding.TemplateReader{Cache: mgr.GetCache(), API: mgr.GetAPIReader()},
		Interpreter: interp,
		Recorder:    mgr.GetEventRecorder(bindingstatus.ControllerName),

		MaxConcurrentReconciles: workers,
		FirstReportGrace:        grace,
	}
	if err := r.SetupWithManager(mgr); err != nil {
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
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	controllertest.WaitFor(t, what, cond)
}

// namespace creates a namespace for one test's templates and returns its
// name: base with a random suffix, so that -count reruns on the same API
// server do not collide.
func namespace(t *testing.T, base string) string {
	t.Helper()
	name := unique(base)
	if err := apiClient.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func unique(base string) string { return base + "-" + utilrand.String(5) }

// createWork writes the Work of a binding's template for a cluster, as the
// binding controller does (the manifest content does not matter here).
func createWork(t *testing.T, v binding.View, cluster string) client.ObjectKey {
	t.Helper()
	ref := v.Spec.Resource
	manifest, err := json.Marshal(map[string]any{
		"apiVersion": ref.APIVersion, "kind": ref.Kind,
		"metadata": map[string]any{"namespace": ref.Namespace, "name": ref.Name},
	})
	if err != nil {
		t.Fatal(err)
	}
	annotations := v.WorkAnnotations()
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   names.ExecutionSpace(cluster),
			Name:        names.Work(ref.Namespace, ref.Name, ref.Kind),
			Labels:      map[string]string{v.IDLabel(): v.ID()},
			Annotations: annotations,
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: manifest}},
		}}},
	}
	if err := apiClient.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(w)
}

// reportApplied writes a Work's status as the execution and work status
// controllers would: Applied, and the member object's reflected status.
func reportApplied(t *testing.T, key client.ObjectKey, gvk schema.GroupVersionKind, resource string, status map[string]any) {
	t.Helper()
	raw, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "reporting Work "+key.String()+" applied", func(ctx context.Context) (bool, error) {
		w := &workv1alpha1.Work{}
		if err := apiClient.Get(ctx, key, w); err != nil {
			return false, err
		}
		manifest := map[string]any{}
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &manifest); err != nil {
			return false, err
		}
		md := manifest["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		w.Status.Conditions = []metav1.Condition{{
			Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkReasonAppliedSuccessful,
			Message: "Manifest has been successfully applied", LastTransitionTime: metav1.Now(),
		}}
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
			Identifier: workv1alpha1.ResourceIdentifier{
				Ordinal: 0, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Resource: resource,
				Namespace: ns, Name: md["name"].(string),
			},
			Status: &runtime.RawExtension{Raw: raw},
			Health: workv1alpha1.ResourceHealthy,
		}}
		return true, apiClient.Status().Update(ctx, w)
	})
}
