package binding_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
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

// members are the member clusters the tests schedule to; each has a Cluster
// and an execution namespace.
var members = []string{"member1", "member2", "member3"}

func TestMain(m *testing.M) { os.Exit(runWithAPIServer(m)) }

func runWithAPIServer(m *testing.M) int {
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
	apiConfig, apiClient = server.Config, server.Client
	ctx := context.Background()
	for _, m := range members {
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(m)}},
			&clusterv1alpha1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Name: m, Labels: map[string]string{"member": m}},
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
	return m.Run()
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

// writeCounter counts the controller's writes of Works.
type writeCounter struct {
	client.Client
	mu     sync.Mutex
	writes []string
}

func (c *writeCounter) record(verb string, obj client.Object) {
	if _, ok := obj.(*workv1alpha1.Work); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, verb+" "+obj.GetNamespace()+"/"+obj.GetName())
}

func (c *writeCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.record("create", obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *writeCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.record("update", obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *writeCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.record("patch", obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *writeCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.record("delete", obj)
	return c.Client.Delete(ctx, obj, opts...)
}

// Writes returns the Work writes so far.
func (c *writeCounter) Writes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// start runs the binding controller in its own manager until the test ends.
func start(t *testing.T, workers int) *writeCounter {
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
	counter := &writeCounter{Client: mgr.GetClient()}
	r := &binding.Reconciler{
		Client:                  counter,
		Templates:               binding.TemplateReader{Cache: mgr.GetCache(), API: mgr.GetAPIReader()},
		Interpreter:             interp,
		Recorder:                mgr.GetEventRecorder(binding.ControllerName),
		MaxConcurrentReconciles: workers,
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
	return counter
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

// deployment creates a Deployment template.
func deployment(t *testing.T, ns, name string, replicas int32, image string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
			},
		},
	}
	if err := apiClient.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// resourceOf is the binding's reference to a template.
func resourceOf(o client.Object, apiVersion, kind string) workv1alpha2.ObjectReference {
	return workv1alpha2.ObjectReference{
		APIVersion: apiVersion, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(),
		UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
	}
}

// targets builds spec.clusters as the scheduler writes it.
func targets(nameReplicas ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(nameReplicas); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: nameReplicas[i].(string), Replicas: int32(nameReplicas[i+1].(int))})
	}
	return out
}

func dividedPlacement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}}
}

// deploymentBinding creates the ResourceBinding of a Deployment, scheduled
// to clusters, as the detector and the scheduler would.
func deploymentBinding(t *testing.T, d *appsv1.Deployment, clusters []workv1alpha2.TargetCluster, mutate ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: d.Namespace,
			Name:      names.Binding(d.Name, "Deployment"),
			Labels:    map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + d.Namespace + "-" + d.Name},
		},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  resourceOf(d, "apps/v1", "Deployment"),
			Replicas:  *d.Spec.Replicas,
			Placement: dividedPlacement(),
			Clusters:  clusters,
		},
	}
	for _, m := range mutate {
		m(rb)
	}
	if err := apiClient.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

// updateBinding changes a binding, retrying on conflicts.
func updateBinding(t *testing.T, key client.ObjectKey, change func(*workv1alpha2.ResourceBinding)) {
	t.Helper()
	waitFor(t, "updating binding "+key.String(), func(ctx context.Context) (bool, error) {
		rb := &workv1alpha2.ResourceBinding{}
		if err := apiClient.Get(ctx, key, rb); err != nil {
			return false, err
		}
		change(rb)
		if err := apiClient.Update(ctx, rb); err != nil {
			return false, err
		}
		return true, nil
	})
}

// workKey is where the Work of a template lives for a cluster.
func workKey(cluster, ns, name, kind string) client.ObjectKey {
	return client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: names.Work(ns, name, kind)}
}

// getWork reads a Work; nil when it does not exist.
func getWork(ctx context.Context, key client.ObjectKey) (*workv1alpha1.Work, error) {
	w := &workv1alpha1.Work{}
	if err := apiClient.Get(ctx, key, w); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return w, nil
}

// releaseWork removes the execution controller's finalizer, as the
// execution controller does once the member objects are gone.
func releaseWork(t *testing.T, key client.ObjectKey) {
	t.Helper()
	waitFor(t, "releasing Work "+key.String(), func(ctx context.Context) (bool, error) {
		w, err := getWork(ctx, key)
		if err != nil || w == nil {
			return w == nil, err
		}
		if !controllerutil.RemoveFinalizer(w, workv1alpha1.ExecutionControllerFinalizer) {
			return true, nil
		}
		return false, apiClient.Update(ctx, w)
	})
}

// waitWorkGone waits until the controller deletes a Work, then releases it.
func waitWorkGone(t *testing.T, key client.ObjectKey) {
	t.Helper()
	waitFor(t, "Work "+key.String()+" is deleted", func(ctx context.Context) (bool, error) {
		w, err := getWork(ctx, key)
		return err == nil && (w == nil || !w.DeletionTimestamp.IsZero()), err
	})
	releaseWork(t, key)
	waitFor(t, "Work "+key.String()+" is gone", func(ctx context.Context) (bool, error) {
		w, err := getWork(ctx, key)
		return err == nil && w == nil, err
	})
}
