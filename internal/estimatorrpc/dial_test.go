package estimatorrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kube is a real API server's client, holding the estimators' Services.
var kube client.Client

func TestMain(m *testing.M) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		os.Exit(1)
	}
	if kube, err = client.New(cfg, client.Options{}); err == nil {
		err = kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceNamespace}})
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
	}
	os.Exit(code)
}

func defaultOptions() DialOptions {
	return DialOptions{Port: DefaultPort, ServicePrefix: DefaultServicePrefix, ServiceNamespace: DefaultServiceNamespace, Timeout: 5 * time.Second}
}

// pointService writes cluster's estimator Service: an ExternalName one
// whose estimator port targets addr's port.
func pointService(t *testing.T, cluster string, spec corev1.ServiceSpec) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultServiceNamespace, Name: DefaultServicePrefix + "-" + cluster}}
	if err := kube.Get(t.Context(), client.ObjectKeyFromObject(svc), svc); err == nil {
		svc.Spec = spec
		if err := kube.Update(t.Context(), svc); err != nil {
			t.Fatal(err)
		}
		return
	}
	svc.Spec = spec
	if err := kube.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
}

func externalName(host string, port, target int) corev1.ServiceSpec {
	return corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: host, Ports: []corev1.ServicePort{{Port: int32(port), TargetPort: intstr.FromInt(target)}}}
}

func TestResolve(t *testing.T) {
	pointService(t, "ext", externalName("127.0.0.1", DefaultPort, 4567))
	pointService(t, "same-port", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "estimator.example", Ports: []corev1.ServicePort{{Port: DefaultPort}}})
	pointService(t, "other-port", externalName("127.0.0.1", 80, 4567))
	pointService(t, "named-target", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1", Ports: []corev1.ServicePort{{Port: DefaultPort, TargetPort: intstr.FromString("grpc")}}})
	pointService(t, "cluster-ip", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: DefaultPort}}})

	d, err := NewDialer(defaultOptions(), kube)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cluster, want, err string
	}{
		{cluster: "ext", want: "127.0.0.1:4567"},
		{cluster: "same-port", want: "estimator.example:10352"},
		{cluster: "missing", want: "karmada-scheduler-estimator-missing:10352"},
		{cluster: "other-port", err: "has no port 10352"},
		{cluster: "named-target", err: `numeric targetPort, got "grpc"`},
		{cluster: "cluster-ip", err: "type ClusterIP is not supported"},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			got, err := d.resolve(t.Context(), tc.cluster)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("resolve = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolve = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestNewDialerRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*DialOptions)
		flag string
	}{
		{"port", func(o *DialOptions) { o.Port = 0 }, "--scheduler-estimator-port"},
		{"timeout", func(o *DialOptions) { o.Timeout = 0 }, "--scheduler-estimator-timeout"},
		{"CA file", func(o *DialOptions) { o.CAFile = "/nonexistent/ca.crt" }, "--scheduler-estimator-ca-file"},
		{"client certificate", func(o *DialOptions) { o.CertFile = "/nonexistent/tls.crt" }, "--scheduler-estimator-cert-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			tc.edit(&o)
			if _, err := NewDialer(o, kube); err == nil || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("NewDialer = %v, want an error naming %s", err, tc.flag)
			}
		})
	}
}

func serveOn(t *testing.T, srv EstimatorServer) (addr string, stop func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(ServerCodec())
	RegisterEstimatorServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String(), s.Stop
}

// TestDialerFollowsTheService: a connection is kept while it works; once
// forgotten, the next call reads the Service again and reaches the
// estimator where it moved.
func TestDialerFollowsTheService(t *testing.T) {
	first, stopFirst := serveOn(t, &fakeEstimator{})
	_, firstPort, _ := net.SplitHostPort(first)
	port, _ := strconv.Atoi(firstPort)
	pointService(t, "member1", externalName("127.0.0.1", DefaultPort, port))

	opts := defaultOptions()
	opts.Timeout = 2 * time.Second
	d, err := NewDialer(opts, kube)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	call := func() error {
		c, err := d.Client(t.Context(), "member1")
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(t.Context(), d.Timeout())
		defer cancel()
		_, err = c.MaxAvailableReplicas(ctx, &MaxAvailableReplicasRequest{Cluster: "member1"})
		return err
	}
	if err := call(); err != nil {
		t.Fatalf("first call: %v", err)
	}

	stopFirst()
	second, _ := serveOn(t, &fakeEstimator{})
	_, secondPort, _ := net.SplitHostPort(second)
	port, _ = strconv.Atoi(secondPort)
	pointService(t, "member1", externalName("127.0.0.1", DefaultPort, port))
	err = call()
	if err == nil {
		t.Fatal("the kept connection reached the moved estimator; it should still point at the stopped one")
	}
	// An error of the estimator's own keeps the connection; an unreachable
	// estimator is forgotten and left alone for RetryAfter.
	d.Failed("member1", status.Error(codes.InvalidArgument, "cluster: wrong"))
	if _, err := d.Client(t.Context(), "member1"); err != nil {
		t.Fatalf("after an estimator's own error: %v", err)
	}
	d.Failed("member1", err)
	if _, err := d.Client(t.Context(), "member1"); !errors.Is(err, ErrBackoff) {
		t.Fatalf("right after an unreachable estimator, Client = %v, want ErrBackoff", err)
	}
	d.now = func() time.Time { return time.Now().Add(RetryAfter) }
	if err := call(); err != nil {
		t.Fatalf("after the back-off: %v", err)
	}
}
