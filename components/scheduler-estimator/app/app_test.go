package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
	"github.com/flotilla-io/flotilla/internal/testlog"
)

// The member: one API server for the package's tests (no controllers, no
// scheduler: nodes, pods and their status are what the tests write).
var (
	memberConfig *rest.Config
	member       client.Client
	noServer     string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "bin", "k8s", "v1.37.2")
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
			noServer = "KUBEBUILDER_ASSETS is not set and " + dir + " has no kube-apiserver: run `make k8s-binaries`"
			return m.Run()
		}
		abs, _ := filepath.Abs(dir)
		_ = os.Setenv("KUBEBUILDER_ASSETS", abs)
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	memberConfig = cfg
	if member, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "member client: %v\n", err)
		return 1
	}
	return m.Run()
}

func needMember(tb testing.TB) {
	tb.Helper()
	if memberConfig == nil {
		tb.Fatal(noServer)
	}
}

func quantities(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// create creates obj, then writes its status through the status
// subresource when setStatus changes it: the API server ignores the status
// of a create.
func create[T client.Object](tb testing.TB, obj T, setStatus func(T)) T {
	tb.Helper()
	ctx := context.Background()
	if err := member.Create(ctx, obj); err != nil {
		tb.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	// At once: no kubelet confirms the end of a bound pod.
	tb.Cleanup(func() { _ = member.Delete(context.Background(), obj, client.GracePeriodSeconds(0)) })
	if setStatus != nil {
		setStatus(obj)
		if err := member.Status().Update(ctx, obj); err != nil {
			tb.Fatalf("status of %T %s: %v", obj, obj.GetName(), err)
		}
	}
	return obj
}

// node is a node of allocatable 4 CPU, 8Gi and 110 pods in zone.
func node(tb testing.TB, name, zone string, edit func(*corev1.Node)) {
	const cpu = "4"
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
	if edit != nil {
		edit(n)
	}
	taints := n.Spec.Taints
	create(tb, n, func(n *corev1.Node) {
		n.Status.Capacity = quantities("cpu", cpu, "memory", "8Gi", "pods", "110")
		n.Status.Allocatable = quantities("cpu", cpu, "memory", "8Gi", "pods", "110")
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	})
	// The API server taints new nodes not-ready (TaintNodesByCondition);
	// the node lifecycle controller, absent here, lifts it once the node
	// is Ready.
	n.Spec.Taints = taints
	if err := member.Update(context.Background(), n); err != nil {
		tb.Fatalf("taints of node %s: %v", name, err)
	}
}

// pod is a pod of namespace work.
func pod(name, nodeName, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: name},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
			Name: "app", Image: "app:v1", Resources: corev1.ResourceRequirements{Requests: quantities("cpu", cpu)},
		}}},
	}
}

// namespace creates a namespace that stays: without kube-controller-manager
// a deleted namespace would stay Terminating and refuse the next run.
func namespace(tb testing.TB, name string) {
	tb.Helper()
	if err := member.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		tb.Fatal(err)
	}
}

// start runs an estimator for cluster "member1" with args until the test
// ends, on a listener of its own; it returns the address.
func start(tb testing.TB, args ...string) string {
	tb.Helper()
	opts, err := ParseOptions(append([]string{"--cluster-name=member1", "--health-probe-bind-address=0", "--metrics-bind-address=0"}, args...)...)
	if err != nil {
		tb.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	opts.Listener = lis
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, memberConfig, opts, testlog.New(tb))
		if ctx.Err() == nil {
			// Said at once: the test's calls would otherwise wait for an
			// estimator that is gone until their bound.
			tb.Errorf("Run returned before the test ended: %v", err)
		}
		done <- err
	}()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	return lis.Addr().String()
}

// dial connects to addr; the calls wait for the estimator to serve (it
// serves once its caches are synced).
func dial(tb testing.TB, addr string, creds credentials.TransportCredentials) *estimatorrpc.Client {
	tb.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cc.Close() })
	return estimatorrpc.NewClient(cc)
}

func callContext(tb testing.TB) context.Context {
	// A bound for a test that would otherwise hang, not an assertion:
	// generous, since a loaded machine with -race syncs slowly.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// TestEstimator runs the estimator against a member API server holding
// nodes and pods, and asks it the three questions through gRPC.
func TestEstimator(t *testing.T) {
	needMember(t)
	namespace(t, "work")
	namespace(t, "limited")
	node(t, "n1", "z1", nil)
	node(t, "n2", "z2", nil)
	node(t, "n3", "z1", func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	})
	node(t, "n4", "z2", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	create(t, pod("on-n1", "n1", "1500m"), nil)
	create(t, pod("on-n2", "n2", "3"), nil)
	create(t, pod("done-on-n2", "n2", "4"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	create(t, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: "cpu"},
		Spec:       corev1.ResourceQuotaSpec{Hard: quantities("requests.cpu", "2")},
	}, func(q *corev1.ResourceQuota) {
		q.Status.Hard = quantities("requests.cpu", "2")
		q.Status.Used = quantities("requests.cpu", "500m")
	})
	deploymentWithPendingPods(t)

	est := dial(t, start(t), insecure.NewCredentials())
	ctx := callContext(t)
	oneCPU := quantities("cpu", "1")
	replicas := func(ns string, claim *estimatorrpc.NodeClaim) int32 {
		t.Helper()
		resp, err := est.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{
			Cluster:             "member1",
			ReplicaRequirements: estimatorrpc.ReplicaRequirements{NodeClaim: claim, ResourceRequest: oneCPU, Namespace: ns},
		}, grpc.WaitForReady(true))
		if err != nil {
			t.Fatal(err)
		}
		return resp.MaxReplicas
	}

	for _, tt := range []struct {
		name      string
		namespace string
		claim     *estimatorrpc.NodeClaim
		want      int32
	}{
		// n1: 4-1.5 → 2; n2: 4-3 → 1 (the succeeded pod holds nothing);
		// n3 tainted, n4 cordoned.
		{name: "free CPU per node", namespace: "work", want: 3},
		{name: "node affinity", namespace: "work", want: 2, claim: &estimatorrpc.NodeClaim{NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}},
		}}}}},
		{name: "toleration", namespace: "work", want: 3 + 4, claim: &estimatorrpc.NodeClaim{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}},
		{name: "quota", namespace: "limited", want: 1},
	} {
		if got := replicas(tt.namespace, tt.claim); got != tt.want {
			t.Errorf("%s: MaxReplicas = %d, want %d", tt.name, got, tt.want)
		}
	}

	sets, err := est.MaxAvailableComponentSets(ctx, &estimatorrpc.MaxAvailableComponentSetsRequest{
		Cluster:   "member1",
		Namespace: "work",
		Components: []estimatorrpc.Component{
			{Name: "a", Replicas: 1, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{ResourceRequest: quantities("cpu", "2")}},
			{Name: "b", Replicas: 1, ReplicaRequirements: estimatorrpc.ComponentReplicaRequirements{ResourceRequest: oneCPU}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// set 1: a on n1 (500m left), b on n2; set 2: no room for a.
	if sets.MaxSets != 1 {
		t.Errorf("MaxSets = %d, want 1", sets.MaxSets)
	}

	unsched, err := est.GetUnschedulableReplicas(ctx, &estimatorrpc.UnschedulableReplicasRequest{
		Cluster:                "member1",
		Resource:               estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "work", Name: "web"},
		UnschedulableThreshold: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if unsched.UnschedulableReplicas != 2 {
		t.Errorf("UnschedulableReplicas = %d, want 2 (the current ReplicaSet's pods pending for 10 minutes)", unsched.UnschedulableReplicas)
	}

	_, err = est.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: "member2"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "cluster") {
		t.Errorf("another cluster: error = %v, want InvalidArgument naming the cluster field", err)
	}
	_, err = est.GetUnschedulableReplicas(ctx, &estimatorrpc.UnschedulableReplicasRequest{
		Cluster: "member1", Resource: estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "work", Name: "absent"},
	})
	if status.Code(err) != codes.NotFound {
		t.Errorf("absent Deployment: error = %v, want NotFound", err)
	}

	// Without ResourceQuotaEstimate, as Karmada's estimator by default,
	// quotas do not limit.
	noQuota := dial(t, start(t, "--feature-gates=ResourceQuotaEstimate=false"), insecure.NewCredentials())
	resp, err := noQuota.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{
		Cluster:             "member1",
		ReplicaRequirements: estimatorrpc.ReplicaRequirements{ResourceRequest: oneCPU, Namespace: "limited"},
	}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if resp.MaxReplicas != 3 {
		t.Errorf("quotas off: MaxReplicas = %d, want 3", resp.MaxReplicas)
	}

	// A pod bound later takes its room: the cache follows the member.
	create(t, pod("late-on-n1", "n1", "2"), nil)
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return replicas("work", nil) == 1, nil
	}); err != nil {
		t.Errorf("after a 2-CPU pod on n1: MaxReplicas = %d, want 1", replicas("work", nil))
	}
}

// deploymentWithPendingPods makes Deployment work/web as the Deployment
// controller would have: an old and a current ReplicaSet, and pods that
// kube-scheduler marked unschedulable.
func deploymentWithPendingPods(t *testing.T) {
	labels := map[string]string{"app": "web"}
	template := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}
	}
	d := create(t, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template("web:v2")},
	}, nil)
	rs := func(name, image, hash string) *appsv1.ReplicaSet {
		tmpl := template(image)
		tmpl.Labels = map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: hash}
		return create(t, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: name, OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment")),
			}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl},
		}, nil)
	}
	old, current := rs("web-old", "web:v1", "old"), rs("web-new", "web:v2", "new")
	unschedulableSince := func(rs *appsv1.ReplicaSet, name string, ago time.Duration) {
		p := pod(name, "", "100m")
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
		create(t, p, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				LastTransitionTime: metav1.NewTime(time.Now().Add(-ago)), Message: "0/4 nodes are available",
			}}
		})
	}
	unschedulableSince(current, "web-new-1", 10*time.Minute)
	unschedulableSince(current, "web-new-2", 10*time.Minute)
	unschedulableSince(current, "web-new-3", 0)
	unschedulableSince(old, "web-old-1", 10*time.Minute)
}

// TestTLS: with a certificate and a client CA, the estimator answers
// clients presenting a certificate of that CA and refuses others; with
// --insecure-skip-grpc-client-verify it asks for none.
func TestTLS(t *testing.T) {
	needMember(t)
	dir := t.TempDir()
	ca := newCA(t, "estimator-ca")
	otherCA := newCA(t, "other-ca")
	serverCert, serverKey := ca.issue(t, dir, "server", func(c *x509.Certificate) {
		c.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	clientCert, clientKey := ca.issue(t, dir, "karmada-scheduler", func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	strangerCert, strangerKey := otherCA.issue(t, dir, "stranger", func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--grpc-auth-cert-file=" + serverCert, "--grpc-auth-key-file=" + serverKey, "--grpc-client-ca-file=" + caFile}
	verifying := start(t, tlsArgs...)
	skipping := start(t, slices.Concat(tlsArgs, []string{"--insecure-skip-grpc-client-verify"})...)

	creds := func(certFile, keyFile string) credentials.TransportCredentials {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.pem)
		cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		return credentials.NewTLS(cfg)
	}
	ask := func(addr string, c credentials.TransportCredentials) error {
		_, err := dial(t, addr, c).MaxAvailableReplicas(callContext(t), &estimatorrpc.MaxAvailableReplicasRequest{Cluster: "member1"}, grpc.WaitForReady(true))
		return err
	}
	if err := ask(verifying, creds(clientCert, clientKey)); err != nil {
		t.Errorf("client with a certificate of the CA: %v", err)
	}
	if err := ask(skipping, creds("", "")); err != nil {
		t.Errorf("client without a certificate, verification skipped: %v", err)
	}
	// Refused clients fail their handshake: without WaitForReady the call
	// reports it instead of waiting for a connection that never comes.
	for name, c := range map[string]credentials.TransportCredentials{
		"without a certificate":          creds("", ""),
		"with a certificate of other CA": creds(strangerCert, strangerKey),
		"in plaintext":                   insecure.NewCredentials(),
	} {
		if err := refused(t, verifying, c); err != nil {
			t.Errorf("client %s: %v", name, err)
		}
	}
}

// refused checks that a call over c fails as unavailable: the server
// closes the connection during the handshake. The first attempt may race
// the server's start, so it retries until a connection was made and refused.
func refused(t *testing.T, addr string, c credentials.TransportCredentials) error {
	est := dial(t, addr, c)
	ctx := callContext(t)
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, last = est.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: "member1"})
		return last != nil && status.Code(last) == codes.Unavailable && !strings.Contains(last.Error(), "connection refused"), nil
	})
	if err != nil {
		return fmt.Errorf("not refused: last answer %w", last)
	}
	return nil
}

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes a certificate for name signed by the CA, and its key, into
// dir; edit sets the usages.
func (ca *testCA) issue(t *testing.T, dir, name string, edit func(*x509.Certificate)) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	edit(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestOptions(t *testing.T) {
	o, err := ParseOptions()
	if err != nil {
		t.Fatal(err)
	}
	if o.serverPort != 10352 || o.probeAddr != ":10351" || o.bindAddress != "0.0.0.0" || o.parallelism != 16 || o.qps != 20 || o.burst != 30 {
		t.Errorf("defaults = %+v, want Karmada's estimator's", o)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{args: nil, want: []string{"--cluster-name"}},
		{args: []string{"--cluster-name=m", "--server-port=70000", "--parallelism=0"}, want: []string{"--server-port", "--parallelism"}},
		{args: []string{"--cluster-name=m", "--grpc-auth-cert-file=c"}, want: []string{"--grpc-auth-key-file"}},
		{args: []string{"--cluster-name=m", "--grpc-client-ca-file=ca"}, want: []string{"--grpc-client-ca-file"}},
		{args: []string{"--cluster-name=m", "--bind-address=localhost"}, want: []string{"--bind-address"}},
	} {
		o, err := ParseOptions(tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Validate()
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: Validate = %v, want an error naming %s", tt.args, err, w)
			}
		}
	}
	if _, err := ParseOptions("--no-such-flag"); err == nil {
		t.Error("an unknown flag parsed")
	}
	if _, err := ParseOptions("--feature-gates=PropagateDeps=true"); err == nil || !strings.Contains(err.Error(), "PropagateDeps") {
		t.Errorf("an unknown feature gate: %v, want an error naming it", err)
	}
	o, err = ParseOptions("--feature-gates=ResourceQuotaEstimate=false")
	if err != nil {
		t.Fatal(err)
	}
	if o.enabled(ResourceQuotaEstimate) || !o.enabled(SchedulingOvercommitProtection) {
		t.Errorf("gates: ResourceQuotaEstimate %v, SchedulingOvercommitProtection %v; want false, true", o.enabled(ResourceQuotaEstimate), o.enabled(SchedulingOvercommitProtection))
	}
	if !(&Options{}).enabled(ResourceQuotaEstimate) {
		t.Error("options without flags: quotas off, want the default (on)")
	}
	// Run refuses bad options before touching the member.
	o, _ = ParseOptions()
	if err := Run(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, o, testlog.New(t)); err == nil || !strings.Contains(err.Error(), "--cluster-name") {
		t.Errorf("Run without --cluster-name = %v", err)
	}
}

// freeAddress returns a loopback address nothing listens on now.
func freeAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// TestProbesAndMetrics: probes, metrics and profiles on one address, as
// Karmada's estimator serves probes and metrics when both flags name it;
// ready once serving; the answers counted under Karmada's metric names.
func TestProbesAndMetrics(t *testing.T) {
	needMember(t)
	addr := freeAddress(t)
	est := dial(t, start(t, "--health-probe-bind-address="+addr, "--metrics-bind-address="+addr, "--enable-pprof", "--profiling-bind-address="+addr), insecure.NewCredentials())
	ctx := callContext(t)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if _, err := est.MaxAvailableReplicas(ctx, &estimatorrpc.MaxAvailableReplicasRequest{Cluster: "member1"}, grpc.WaitForReady(true)); err != nil {
		t.Fatal(err)
	}
	// Served gRPC answers mean synced caches: ready from now on.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := get("/debug/pprof/cmdline"); code != http.StatusOK {
		t.Errorf("/debug/pprof/cmdline: %d %s", code, body)
	}
	code, body := get("/metrics")
	want := `karmada_scheduler_estimator_estimating_request_total{result="success",type="MaxAvailableReplicas"} 1`
	if code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("/metrics: %d, want a body with %s:\n%s", code, want, body)
	}
}

// TestListenError: a port in use is Run's error, named by flag, and Run
// returns (its informers stopped) while its context lives on.
func TestListenError(t *testing.T) {
	needMember(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	opts, err := ParseOptions("--cluster-name=member1", "--health-probe-bind-address=0", "--bind-address=127.0.0.1", "--server-port="+port)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(callContext(t), memberConfig, opts, testlog.New(t))
	if err == nil || !strings.Contains(err.Error(), "--server-port") {
		t.Errorf("Run on a taken port = %v, want an error naming --server-port", err)
	}
}
