package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/testlog"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// The suite runs the operator against one real API server (envtest). It has
// no kube-controller-manager and no nodes, so the tests play the workload
// controllers' part where a phase waits for a rollout (rollOut); the
// end-to-end suite in test/e2e/operator runs the whole control plane.

var (
	cfg        *rest.Config
	k8s        client.Client
	testClock  = &clock{}
	oldRelease = versions.Release{Version: "v0.1.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}
	newRelease = versions.Release{Version: "v0.2.0", Kubernetes: "v1.37.3", Etcd: "3.6.17-0"}
)

// clock is the operator's clock in these tests: real time plus an offset.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = d
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run these tests with `make test`")
		return 1
	}
	// cert-manager's Certificate CRD, from the module the operator's types
	// come from, so that the cert-manager mode writes real Certificates.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "locating cert-manager's CRDs:", err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join("..", "..", "config", "crd", "operator"),
			filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds", "cert-manager.io_certificates.yaml"),
		},
		ErrorIfCRDPathMissing: true,
	}
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	scheme, err := Scheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startOperator runs an operator whose own release is own until the test
// ends (or stop is called).
func startOperator(t *testing.T, own versions.Release, others ...versions.Release) (stop func()) {
	t.Helper()
	table, err := versions.New(own, others...)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MetricsAddr: "0", ProbeAddr: "0", Concurrency: 2, Versions: &table, Now: testClock.Now,
		// envtest's Services have ClusterIPs nothing serves, outside the
		// loopback range: the operator must not send traffic there.
		Dial: func(_ context.Context, _, address string) (net.Conn, error) {
			return nil, fmt.Errorf("this suite has no Service network (dialling %s)", address)
		}}
	mgr, err := NewManager(cfg, opts, testlog.New(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("operator: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "op-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func newKarmada(ns, name string) *operatorv1alpha1.Karmada {
	return &operatorv1alpha1.Karmada{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.KarmadaSpec{Components: &operatorv1alpha1.KarmadaComponents{
			Etcd: &operatorv1alpha1.Etcd{Local: &operatorv1alpha1.LocalEtcd{}},
		}},
	}
}

// eventually polls cond every 100ms for up to 60s.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

func getKarmada(t *testing.T, ns, name string) *operatorv1alpha1.Karmada {
	t.Helper()
	k := &operatorv1alpha1.Karmada{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, k); err != nil {
		t.Fatal(err)
	}
	return k
}

func waitCondition(t *testing.T, ns, name, typ, reason string) *operatorv1alpha1.Karmada {
	t.Helper()
	var k *operatorv1alpha1.Karmada
	eventually(t, fmt.Sprintf("condition %s with reason %s", typ, reason), func() (bool, error) {
		k = getKarmada(t, ns, name)
		c := meta.FindStatusCondition(k.Status.Conditions, typ)
		if c == nil {
			return false, fmt.Errorf("no %s condition", typ)
		}
		return c.Reason == reason, fmt.Errorf("%s is %s/%s: %s", typ, c.Status, c.Reason, c.Message)
	})
	return k
}

// rollOut plays the workload controllers: it reports the Deployment or
// StatefulSet as fully rolled out at its current generation.
func rollOut(t *testing.T, ns, kind, name string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, kind+" "+name+" rolled out", func() (bool, error) {
		switch kind {
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
				return false, err
			}
			n := ptr.Deref(s.Spec.Replicas, 1)
			rev := fmt.Sprintf("%s-%d", name, s.Generation)
			s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: n, ReadyReplicas: n,
				CurrentReplicas: n, UpdatedReplicas: n, AvailableReplicas: n, CurrentRevision: rev, UpdateRevision: rev}
			return true, k8s.Status().Update(ctx, s)
		default:
			d := &appsv1.Deployment{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
				return false, err
			}
			n := ptr.Deref(d.Spec.Replicas, 1)
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
				ReadyReplicas: n, AvailableReplicas: n}
			return true, k8s.Status().Update(ctx, d)
		}
	})
}

func image(t *testing.T, ns, kind, name string) string {
	t.Helper()
	ctx := context.Background()
	var spec corev1.PodSpec
	switch kind {
	case "StatefulSet":
		s := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			t.Fatal(err)
		}
		spec = s.Spec.Template.Spec
	default:
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		spec = d.Spec.Template.Spec
	}
	return spec.Containers[0].Image
}

// TestInstallPhases: a Karmada goes through etcd and the API server, each
// phase waiting for the one before to roll out, with certificates,
// kubeconfigs and the releases in place; it then waits for the new API
// server to answer, which in this suite it never does.
func TestInstallPhases(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, newKarmada(ns, "demo")); err != nil {
		t.Fatal(err)
	}

	k := waitCondition(t, ns, "demo", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	if !strings.Contains(meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady).Message, "StatefulSet demo-etcd") {
		t.Errorf("Ready message does not name what etcd waits for: %+v", k.Status.Conditions)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-apiserver"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the API server was installed before etcd rolled out (get: %v)", err)
	}
	if got, want := image(t, ns, "StatefulSet", "demo-etcd"), "registry.k8s.io/etcd:3.6.16-0"; got != want {
		t.Errorf("etcd image %q, want %q", got, want)
	}
	for _, name := range []string{"demo-pki-ca", "demo-pki-etcd-ca", "demo-pki-apiserver", "demo-pki-sa", "demo-etcd-cert", "demo-apiserver-cert",
		"demo-admin-config", "demo-controller-manager-kubeconfig", "demo-scheduler-kubeconfig", "demo-descheduler-kubeconfig", "demo-kube-controller-manager-kubeconfig"} {
		sec := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
			t.Errorf("Secret %s: %v", name, err)
			continue
		}
		if sec.Labels[operatorv1alpha1.LabelKarmadaName] != "demo" {
			t.Errorf("Secret %s has labels %v", name, sec.Labels)
		}
	}

	rollOut(t, ns, "StatefulSet", "demo-etcd")
	waitCondition(t, ns, "demo", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonAPIServerProgressing)
	if got, want := image(t, ns, "Deployment", "demo-apiserver"), "registry.k8s.io/kube-apiserver:v1.37.2"; got != want {
		t.Errorf("API server image %q, want %q", got, want)
	}
	rollOut(t, ns, "Deployment", "demo-apiserver")
	k = waitCondition(t, ns, "demo", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonContentsProgressing)
	if msg := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady).Message; !strings.Contains(msg, "waiting for the API server to answer") {
		t.Errorf("Ready message %q does not say it waits for the API server", msg)
	}
	if k.Status.KarmadaVersion != "" {
		t.Errorf("karmadaVersion %q recorded before the rollout finished", k.Status.KarmadaVersion)
	}
	// Defaults are never written back into spec.
	if k.Spec.Version != "" || k.Spec.Components.KarmadaAPIServer != nil {
		t.Errorf("spec was defaulted: %+v", k.Spec)
	}
}

// TestValidation: mistakes the schema cannot catch are reported with the
// field, and nothing is installed.
func TestValidation(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	k := newKarmada(ns, "bad")
	k.Spec.Components.KarmadaAPIServer = &operatorv1alpha1.KarmadaAPIServer{
		CertSANs:      []string{"api.example.com", "not a name!"},
		ServiceSubnet: ptr.To("10.96.0.0/33"),
	}
	if err := k8s.Create(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	k = waitCondition(t, ns, "bad", operatorv1alpha1.ConditionReady, operatorv1alpha1.ReasonValidationError)
	msg := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady).Message
	for _, want := range []string{"spec.components.karmadaAPIServer.certSANs[1]", "spec.components.karmadaAPIServer.serviceSubnet"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %s", msg, want)
		}
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "bad-etcd"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("etcd was installed for an invalid Karmada (get: %v)", err)
	}

	// The schema refuses what CEL can express, naming the field.
	k2 := newKarmada(ns, "bad2")
	k2.Spec.Components.Etcd.Local.Replicas = ptr.To[int32](2)
	err := k8s.Create(context.Background(), k2)
	if err == nil || !strings.Contains(err.Error(), "etcd.local.replicas must be 1 or 3") {
		t.Errorf("creating a Karmada with 2 etcd replicas: %v", err)
	}
}

// TestKarmadaOperatorSample: a resource written for Karmada's operator is
// accepted, runs, and says which of its fields Flotilla ignores.
func TestKarmadaOperatorSample(t *testing.T) {
	startOperator(t, oldRelease)
	ns := newNamespace(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "operator_v1alpha1_karmada_karmada-style.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := &operatorv1alpha1.Karmada{}
	if err := yaml.UnmarshalStrict(data, k); err != nil {
		t.Fatal(err)
	}
	k.Namespace = ns
	if err := k8s.Create(context.Background(), k); err != nil {
		t.Fatalf("the API server refused Karmada's sample: %v", err)
	}
	k = waitCondition(t, ns, "karmada-demo", operatorv1alpha1.ConditionUnsupportedFields, operatorv1alpha1.ReasonIgnored)
	msg := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionUnsupportedFields).Message
	for _, want := range []string{"karmadaSearch", "karmadaAggregatedAPIServer.imageRepository", "karmadaMetricsAdapter", "karmadaControllerManager.imageRepository"} {
		if !strings.Contains(msg, want) {
			t.Errorf("UnsupportedFields message %q does not name %s", msg, want)
		}
	}
	waitCondition(t, ns, "karmada-demo", operatorv1alpha1.ConditionProgressing, operatorv1alpha1.ReasonEtcdProgressing)
	s := &appsv1.StatefulSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "karmada-demo-etcd"}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "3Gi" {
		t.Errorf("etcd's claim template: %+v", s.Spec.VolumeClaimTemplates)
	}
}

func readyMessage(k *operatorv1alpha1.Karmada) string {
	if c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}
