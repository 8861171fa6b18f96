package multiclusterservice_test

import (
	"context"
	"fmt"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/multiclusterservice"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// TestCollect: while member1 holds the MultiClusterService's Work, the
// EndpointSlices of its Service there are collected as they come; once the
// Work goes, so do the collected Works, but for the export's part of one
// the service-export controller also collects.
func TestCollect(t *testing.T) {
	f := fed.Get(t)
	env := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		return (&multiclusterservice.CollectReconciler{Client: mgr.GetClient(), Informers: e.Informers}).SetupWithManager(mgr)
	})
	c, member := env.Client, f.Member("member1").Client
	clusters(t, c, "member1")
	ns := "collect"
	namespace(t, member, ns)
	newSlice := func(name string, ips ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}}
		for _, ip := range ips {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
		}
		return s
	}
	if err := member.Create(t.Context(), newSlice("web-abc", "10.1.0.1")); err != nil {
		t.Fatal(err)
	}
	provider := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: names.ExecutionSpace("member1"), Name: names.Work(ns, "web", multiclusterservice.Kind),
		Labels: map[string]string{workv1alpha1.MultiClusterServiceNamespaceLabel: ns, workv1alpha1.MultiClusterServiceNameLabel: "web"},
	}, Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true)}}
	if err := c.Create(t.Context(), provider); err != nil {
		t.Fatal(err)
	}
	abc, def := names.Work(ns, "web-abc", "EndpointSlice"), names.Work(ns, "web-def", "EndpointSlice")
	collected := func(want ...string) {
		t.Helper()
		controllertest.WaitFor(t, fmt.Sprintf("collected %v", want), func(ctx context.Context) (bool, error) {
			var list workv1alpha1.WorkList
			if err := c.List(ctx, &list, client.InNamespace(names.ExecutionSpace("member1")), client.MatchingLabels{
				workv1alpha1.MultiClusterServiceNamespaceLabel: ns, workv1alpha1.EndpointSliceWorkManagedByLabel: multiclusterservice.Kind,
			}); err != nil {
				return false, err
			}
			var got []string
			for _, w := range list.Items {
				if w.DeletionTimestamp == nil && ptr.Deref(w.Spec.SuspendDispatching, false) {
					got = append(got, w.Name)
				}
			}
			return fmt.Sprint(got) == fmt.Sprint(want), nil
		})
	}
	collected(abc)
	if err := member.Create(t.Context(), newSlice("web-def", "10.1.0.2")); err != nil {
		t.Fatal(err)
	}
	if abc < def {
		collected(abc, def)
	} else {
		collected(def, abc)
	}

	// web-def is also exported.
	w := &workv1alpha1.Work{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: names.ExecutionSpace("member1"), Name: def}, w); err != nil {
		t.Fatal(err)
	}
	w.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] = "MultiClusterService.ServiceExport"
	if err := c.Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), provider); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "web-abc's Work gone, web-def's left to the export", func(ctx context.Context) (bool, error) {
		errABC := c.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace("member1"), Name: abc}, &workv1alpha1.Work{})
		kept := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), kept); err != nil {
			return false, err
		}
		return apierrors.IsNotFound(errABC) && kept.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] == "ServiceExport" &&
			kept.Labels[workv1alpha1.MultiClusterServiceNameLabel] == "", nil
	})
}
