package serviceimport_test

import (
	"context"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceimport"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func start(t *testing.T) client.Client {
	t.Helper()
	env := controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&serviceimport.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(serviceimport.ControllerName)}).SetupWithManager(mgr)
	})
	return env.Client
}

func namespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func ports(s *corev1.Service) []int32 {
	var out []int32
	for _, p := range s.Spec.Ports {
		out = append(out, p.Port)
	}
	return out
}

// TestDerivedService: a ClusterSetIP ServiceImport gets its derived Service,
// with its ports, kept in step with it and deleted with it; one
// deleted by hand comes back.
func TestDerivedService(t *testing.T) {
	c := start(t)
	ns := namespace(t, c, "derived")
	imp := &multiclusterv1alpha1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: multiclusterv1alpha1.ServiceImportSpec{
			Type:  multiclusterv1alpha1.ClusterSetIP,
			IPs:   []string{"10.10.0.7"},
			Ports: []multiclusterv1alpha1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	if err := c.Create(t.Context(), imp); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "derived-web"}
	derived := func(want []int32) {
		t.Helper()
		controllertest.WaitFor(t, "derived-web with the ports", func(ctx context.Context) (bool, error) {
			s := &corev1.Service{}
			if err := c.Get(ctx, key, s); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return slices.Equal(ports(s), want) && s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.Selector) == 0, nil
		})
	}
	derived([]int32{80})
	controllertest.WaitFor(t, "SyncDerivedServiceSucceed on the ServiceImport", func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(list.Items, func(e corev1.Event) bool {
			return e.Reason == flotillaevents.ReasonSyncDerivedServiceSucceed && e.InvolvedObject.Name == "web"
		}), nil
	})

	imp.Spec.Ports = append(imp.Spec.Ports, multiclusterv1alpha1.ServicePort{Name: "grpc", Port: 9090})
	if err := c.Update(t.Context(), imp); err != nil {
		t.Fatal(err)
	}
	derived([]int32{80, 9090})

	if err := c.Delete(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "derived-web"}}); err != nil {
		t.Fatal(err)
	}
	derived([]int32{80, 9090})

	if err := c.Delete(t.Context(), imp); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "derived-web gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, &corev1.Service{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestHeadlessHasNoDerivedService: only ClusterSetIP imports are derived.
func TestHeadlessHasNoDerivedService(t *testing.T) {
	c := start(t)
	ns := namespace(t, c, "headless")
	for _, imp := range []*multiclusterv1alpha1.ServiceImport{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"}, Spec: multiclusterv1alpha1.ServiceImportSpec{
			Type: multiclusterv1alpha1.Headless, Ports: []multiclusterv1alpha1.ServicePort{{Port: 80}}}},
		// Created after the headless one: once its Service exists, the
		// controller has been through the queue past the headless one.
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "barrier"}, Spec: multiclusterv1alpha1.ServiceImportSpec{
			Type: multiclusterv1alpha1.ClusterSetIP, Ports: []multiclusterv1alpha1.ServicePort{{Port: 80}}}},
	} {
		if err := c.Create(t.Context(), imp); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.WaitFor(t, "derived-barrier", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "derived-barrier"}, &corev1.Service{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "derived-direct"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Fatalf("derived-direct of a Headless import: want not found, got %v", err)
	}
}
