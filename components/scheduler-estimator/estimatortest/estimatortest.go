// Package estimatortest runs a real scheduler estimator for other
// components' tests: served in-process on a free local port from an API
// server standing in for the member, and found by its ExternalName Service
// as the scheduler and the descheduler find estimators.
package estimatortest

import (
	"context"
	"net"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/app"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// Serve runs cluster's estimator against the member at member until tb
// ends, and writes its Service, karmada-system/karmada-scheduler-estimator-
// <cluster>, through controlPlane (the namespace is created if missing).
func Serve(tb testing.TB, member *rest.Config, controlPlane client.Client, cluster string) {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: estimatorrpc.DefaultServiceNamespace}}
	if err := controlPlane.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		tb.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: estimatorrpc.DefaultServiceNamespace, Name: estimatorrpc.DefaultServicePrefix + "-" + cluster},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1",
			Ports: []corev1.ServicePort{{Port: estimatorrpc.DefaultPort, TargetPort: intstr.Parse(port)}}},
	}
	if err := controlPlane.Create(ctx, svc); err != nil {
		_ = lis.Close()
		tb.Fatal(err)
	}
	opts, err := app.ParseOptions("--cluster-name="+cluster, "--health-probe-bind-address=0")
	if err != nil {
		tb.Fatal(err)
	}
	opts.Listener = lis
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, member, opts, logr.Discard()) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("estimator of %s: %v", cluster, err)
		}
		_ = controlPlane.Delete(context.Background(), svc)
	})
}
