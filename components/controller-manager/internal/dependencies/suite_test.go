package dependencies_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/dependencies"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/detector"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/lua"
)

// The API server and the manager shared by the package's integration tests:
// the distributor runs with the binding controller, which renders the
// attached bindings into Works, and the detector, which claims templates
// for policies. Each test works in a namespace of its own.
var (
	apiClient client.Client
	noServer  string
)

// members are the member clusters the tests schedule to; each has a Cluster
// and an execution namespace.
var members = []string{"member1", "member2", "member3"}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	scheme, err := controllertest.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
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
	apiClient = server.Client
	ctx := context.Background()
	for _, m := range members {
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(m)}},
			&clusterv1alpha1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Name: m},
				Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"},
			},
		}
		for _, o := range objs {
			if err := apiClient.Create(ctx, o); err != nil {
				fmt.Fprintf(os.Stderr, "creating %s: %v\n", o.GetName(), err)
				return 1
			}
		}
	}

	stop, err := startControllers(server.Config, scheme)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// startControllers runs the distributor, the binding controller and the
// detector in one manager until stop is called.
func startControllers(cfg *rest.Config, scheme *runtime.Scheme) (stop func() error, err error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 testLogger(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, err
	}
	vm := lua.New()
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		return nil, err
	}
	templates := binding.TemplateReader{API: mgr.GetAPIReader()}
	if err := (&dependencies.Reconciler{
		Client:      mgr.GetClient(),
		Templates:   templates,
		Interpreter: testInterpreter{interp},
		Recorder:    mgr.GetEventRecorder(dependencies.ControllerName),
	}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&binding.Reconciler{
		Client:      mgr.GetClient(),
		Templates:   templates,
		Interpreter: interp,
		Recorder:    mgr.GetEventRecorder(binding.ControllerName),
	}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if _, err := detector.SetupWithManager(mgr, detector.Options{Interpreter: interp, Workers: 2}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		err := <-done
		vm.Close()
		return err
	}, nil
}

// Annotations of test Deployments that make testInterpreter answer
// GetDependencies as a user's customization could.
const (
	// selectorAnnotation: the ConfigMaps of the Deployment's namespace
	// selected by the value, a label selector.
	selectorAnnotation = "test.flotilla.io/configmaps-selected-by"
	// invalidAnnotation: a dependency without a kind.
	invalidAnnotation = "test.flotilla.io/invalid-dependency"
	// configMapAnnotation: the ConfigMap "<namespace>/<name>" of the
	// value, for cluster-scoped templates (ClusterRoles), whose built-in
	// rules name no dependencies.
	configMapAnnotation = "test.flotilla.io/configmap"
)

// testInterpreter is the static chain, with label selectors and invalid
// answers on demand.
type testInterpreter struct{ interpreter.Interpreter }

func (i testInterpreter) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	a := obj.GetAnnotations()
	if v, ok := a[selectorAnnotation]; ok {
		sel, err := metav1.ParseToLabelSelector(v)
		if err != nil {
			return nil, err
		}
		return []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "ConfigMap", Namespace: obj.GetNamespace(), LabelSelector: sel}}, nil
	}
	if _, ok := a[invalidAnnotation]; ok {
		return []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Name: "cfg"}}, nil
	}
	if v, ok := a[configMapAnnotation]; ok {
		ns, name, _ := strings.Cut(v, "/")
		return []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}}, nil
	}
	return i.Interpreter.GetDependencies(ctx, obj)
}

func (i testInterpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	if gvk.Kind == "ClusterRole" && op == configv1alpha1.InterpreterOperationInterpretDependency {
		return true
	}
	return i.Interpreter.HookEnabled(gvk, op)
}

// testLogger is quiet unless FLOTILLA_TEST_LOG gives a verbosity. It
// writes to stderr, not through t: the manager outlives every test.
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
	if apiClient == nil {
		t.Fatal(noServer)
	}
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	controllertest.WaitFor(t, what, cond)
}

// namespace creates a namespace for one test and returns its name: base
// with a random suffix, so that -count reruns do not collide.
func namespace(t *testing.T, base string) string {
	t.Helper()
	needAPIServer(t)
	name := base + "-" + utilrand.String(5)
	if err := apiClient.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := apiClient.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
	create(t, cm)
	return cm
}

// podUsing is a pod spec mounting the ConfigMap and the Secret (when
// named) and running as the service account (when named).
func podUsing(configMap, secret, serviceAccount string) corev1.PodSpec {
	spec := corev1.PodSpec{ServiceAccountName: serviceAccount, Containers: []corev1.Container{{Name: "main", Image: "nginx"}}}
	if configMap != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}},
		}})
	}
	if secret != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "secret", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: secret},
		}})
	}
	return spec
}

func deployment(t *testing.T, ns, name string, pod corev1.PodSpec, annotations ...string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		d.Annotations[annotations[i]] = annotations[i+1]
	}
	create(t, d)
	return d
}

func targets(clusters ...string) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, len(clusters))
	for i, c := range clusters {
		out[i] = workv1alpha2.TargetCluster{Name: c, Replicas: 1}
	}
	return out
}

// dependentBinding creates the binding of a Deployment with propagateDeps,
// scheduled to clusters, as the detector and the scheduler would.
func dependentBinding(t *testing.T, d *appsv1.Deployment, clusters []workv1alpha2.TargetCluster) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: d.Namespace,
			Name:      names.Binding(d.Name, "Deployment"),
			Labels:    map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + d.Namespace + "-" + d.Name},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{
				APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name,
				UID: d.UID, ResourceVersion: d.ResourceVersion,
			},
			Replicas:      1,
			PropagateDeps: true,
			Placement:     &policyv1alpha1.Placement{},
			Clusters:      clusters,
		},
	}
	create(t, rb)
	return rb
}

// getBinding reads a binding; nil when it does not exist.
func getBinding(ctx context.Context, ns, name string) (*workv1alpha2.ResourceBinding, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := apiClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return rb, nil
}

// waitBinding waits until the binding ns/name exists and satisfies ok.
func waitBinding(t *testing.T, ns, name, what string, ok func(*workv1alpha2.ResourceBinding) bool) *workv1alpha2.ResourceBinding {
	t.Helper()
	var got *workv1alpha2.ResourceBinding
	waitFor(t, "binding "+ns+"/"+name+" "+what, func(ctx context.Context) (bool, error) {
		rb, err := getBinding(ctx, ns, name)
		if err != nil || rb == nil {
			return false, err
		}
		got = rb
		return ok(rb), nil
	})
	return got
}

// waitBindingGone waits until the binding ns/name no longer exists.
func waitBindingGone(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, "binding "+ns+"/"+name+" is gone", func(ctx context.Context) (bool, error) {
		rb, err := getBinding(ctx, ns, name)
		return err == nil && rb == nil, err
	})
}

// updateBinding changes a binding, retrying on conflicts.
func updateBinding(t *testing.T, ns, name string, change func(*workv1alpha2.ResourceBinding)) {
	t.Helper()
	waitFor(t, "updating binding "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		rb, err := getBinding(ctx, ns, name)
		if err != nil || rb == nil {
			return false, err
		}
		change(rb)
		return true, apiClient.Update(ctx, rb)
	})
}

// hasEvent reports whether an event with reason was recorded on the object
// called name in namespace.
func hasEvent(ctx context.Context, namespace, name, reason string) (bool, error) {
	var list corev1.EventList
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": name, "reason": reason})
	if err := apiClient.List(ctx, &list, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return false, err
	}
	return len(list.Items) > 0, nil
}

func waitEvent(t *testing.T, ns, name, reason string) {
	t.Helper()
	waitFor(t, "event "+reason+" on "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, name, reason)
	})
}

// cfgWorkExists tells whether the Work of the ConfigMap ns/cfg in cluster
// exists and is not being deleted.
func cfgWorkExists(ctx context.Context, cluster, ns string) (bool, error) {
	w := &workv1alpha1.Work{}
	err := apiClient.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: names.Work(ns, "cfg", "ConfigMap")}, w)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return w.DeletionTimestamp.IsZero(), nil
}
