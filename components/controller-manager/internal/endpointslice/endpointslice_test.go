package endpointslice_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/endpointslice"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func start(t *testing.T) client.Client {
	t.Helper()
	env := controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&endpointslice.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	return env.Client
}

func ensureNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// memberSlice is an EndpointSlice of Service svc as a member's
// endpointslice controller makes it.
func memberSlice(ns, name, svc string, ips ...string) []byte {
	s := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io", "app": "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	raw, _ := json.Marshal(s)
	return raw
}

func addresses(s *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

// TestImportedSlices: a collected Work becomes imported-<cluster>-<slice>
// for derived-<svc>, follows the Work's manifest, and goes with the Work,
// which is released; a Work whose export ended (no Service label) loses
// its slices and the finalizer too.
func TestImportedSlices(t *testing.T) {
	c := start(t)
	ensureNamespace(t, c, names.ExecutionSpace("member1"))
	ns := "shop"
	ensureNamespace(t, c, ns)
	work := serviceexport.CollectedWork(names.ExecutionSpace("member1"), "web-abc-work", ns, "web", serviceexport.ManagedByKind,
		memberSlice(ns, "web-abc", "web", "10.1.0.1"))
	work.Labels[workv1alpha1.WorkPermanentIDLabel] = "0f5e6b3a-0000-4000-8000-000000000001"
	if err := c.Create(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: endpointslice.Name("web-abc", "member1")}
	sliceIs := func(ips ...string) {
		t.Helper()
		controllertest.WaitFor(t, key.String()+" listing the Work's addresses", func(ctx context.Context) (bool, error) {
			s := &discoveryv1.EndpointSlice{}
			if err := c.Get(ctx, key, s); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return slices.Equal(addresses(s), ips) && s.Labels[discoveryv1.LabelServiceName] == "derived-web" &&
				s.Labels[workv1alpha1.WorkPermanentIDLabel] == work.Labels[workv1alpha1.WorkPermanentIDLabel] &&
				s.Labels["app"] == "" && s.Labels[discoveryv1.LabelManagedBy] == "" &&
				s.Annotations[workv1alpha1.WorkNameAnnotation] == work.Name && len(s.Ports) == 1 && *s.Ports[0].Port == 8080, nil
		})
	}
	sliceIs("10.1.0.1")

	if err := c.Get(t.Context(), client.ObjectKeyFromObject(work), work); err != nil {
		t.Fatal(err)
	}
	work.Spec.Workload.Manifests[0].RawExtension = runtime.RawExtension{Raw: memberSlice(ns, "web-abc", "web", "10.1.0.1", "10.1.0.2")}
	if err := c.Update(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	sliceIs("10.1.0.1", "10.1.0.2")

	if err := c.Delete(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the imported slice and the Work gone", func(ctx context.Context) (bool, error) {
		errSlice := c.Get(ctx, key, &discoveryv1.EndpointSlice{})
		errWork := c.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{})
		return apierrors.IsNotFound(errSlice) && apierrors.IsNotFound(errWork), nil
	})

	// A Work the export let go while a MultiClusterService keeps it.
	kept := serviceexport.CollectedWork(names.ExecutionSpace("member1"), "web-def-work", ns, "web", "MultiClusterService.ServiceExport",
		memberSlice(ns, "web-def", "web", "10.1.0.3"))
	kept.Labels[workv1alpha1.WorkPermanentIDLabel] = "0f5e6b3a-0000-4000-8000-000000000002"
	if err := c.Create(t.Context(), kept); err != nil {
		t.Fatal(err)
	}
	keptKey := client.ObjectKey{Namespace: ns, Name: endpointslice.Name("web-def", "member1")}
	controllertest.WaitFor(t, keptKey.String(), func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, keptKey, &discoveryv1.EndpointSlice{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(kept), kept); err != nil {
		t.Fatal(err)
	}
	delete(kept.Labels, workv1alpha1.ServiceNameLabel)
	delete(kept.Labels, workv1alpha1.ServiceNamespaceLabel)
	kept.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] = "MultiClusterService"
	if err := c.Update(t.Context(), kept); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the released Work's slice gone and finalizer removed", func(ctx context.Context) (bool, error) {
		errSlice := c.Get(ctx, keptKey, &discoveryv1.EndpointSlice{})
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(kept), w); err != nil {
			return false, err
		}
		return apierrors.IsNotFound(errSlice) && !controllerutil.ContainsFinalizer(w, workv1alpha1.EndpointSliceControllerFinalizer), nil
	})
}
