package serviceexport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/config/crd"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// A control plane and one bare member API server: the test writes the
// member's EndpointSlices itself, as its endpointslice controller would.
var fed = &localfedtest.Shared{Options: localfed.Options{Members: 1, APIServerOnlyMembers: true, StartTimeout: 5 * time.Minute}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

type env struct {
	cp, member client.Client
}

func start(t *testing.T) *env {
	t.Helper()
	f := fed.Get(t)
	ctl := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		return (&serviceexport.Reconciler{Client: mgr.GetClient(), Informers: e.Informers}).SetupWithManager(mgr)
	})
	e := &env{cp: ctl.Client, member: f.Member("member1").Client}
	data, err := fs.ReadFile(crd.Bases, "bases/multicluster.x-k8s.io_serviceexports.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crdObj := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crdObj); err != nil {
		t.Fatal(err)
	}
	if err := e.member.Create(t.Context(), crdObj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the ServiceExport CRD served by the member", func(ctx context.Context) (bool, error) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("multicluster.x-k8s.io/v1alpha1")
		list.SetKind("ServiceExportList")
		return e.member.List(ctx, list) == nil, nil
	})
	if err := e.cp.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace("member1")}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return e
}

func (e *env) namespace(t *testing.T, name string) {
	t.Helper()
	if err := e.member.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func serviceExport(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("multicluster.x-k8s.io/v1alpha1")
	u.SetKind("ServiceExport")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func slice(ns, name, svc string, ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	return s
}

// exportWork is the Work that put the ServiceExport into member1, applied,
// as the execution controller leaves it.
func (e *env) exportWork(t *testing.T, ns, name string) {
	t.Helper()
	raw, err := json.Marshal(serviceExport(ns, name).Object)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionSpace("member1"), Name: name + "-serviceexport-" + ns},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: raw}},
		}}},
	}
	if err := e.cp.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkReasonAppliedSuccessful, Message: "set by the test"})
	if err := e.cp.Status().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
}

// collected lists the collected Works of Service ns/svc by name, with the
// addresses of their manifest; Works being deleted are left out.
func (e *env) collected(ctx context.Context, ns, svc string) (map[string][]string, error) {
	var works workv1alpha1.WorkList
	if err := e.cp.List(ctx, &works, client.InNamespace(names.ExecutionSpace("member1")), client.MatchingLabels{
		workv1alpha1.ServiceNamespaceLabel: ns, workv1alpha1.ServiceNameLabel: svc,
	}); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, w := range works.Items {
		if w.DeletionTimestamp != nil {
			continue
		}
		if !ptr.Deref(w.Spec.SuspendDispatching, false) || !controllerutil.ContainsFinalizer(&w, workv1alpha1.EndpointSliceControllerFinalizer) ||
			len(w.Spec.Workload.Manifests) != 1 {
			return nil, fmt.Errorf("work %s: not a suspended, finalized Work of one manifest", w.Name)
		}
		var s discoveryv1.EndpointSlice
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &s); err != nil {
			return nil, err
		}
		if s.ResourceVersion != "" || s.UID != "" {
			return nil, fmt.Errorf("work %s: manifest keeps the member's bookkeeping", w.Name)
		}
		var ips []string
		for _, ep := range s.Endpoints {
			ips = append(ips, ep.Addresses...)
		}
		out[w.Name] = ips
	}
	return out, nil
}

func (e *env) collectedAre(t *testing.T, ns, svc string, want map[string][]string) {
	t.Helper()
	controllertest.WaitFor(t, fmt.Sprintf("collected Works of %s/%s: %v", ns, svc, want), func(ctx context.Context) (bool, error) {
		got, err := e.collected(ctx, ns, svc)
		if err != nil {
			return false, err
		}
		if len(got) != len(want) {
			return false, nil
		}
		for name, ips := range want {
			if !slices.Equal(got[name], ips) {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestCollectsExportedSlices: the member's EndpointSlices of an exported
// Service are collected as they come, change and go, those the control
// plane put there are not, and unexporting removes the collected Works.
func TestCollectsExportedSlices(t *testing.T) {
	e := start(t)
	ns := "shop"
	e.namespace(t, ns)
	for _, o := range []client.Object{
		slice(ns, "web-abc", "web", "10.1.0.1"),
		// Of a Service that is not exported.
		slice(ns, "db-abc", "db", "10.1.0.9"),
	} {
		if err := e.member.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	applied := slice(ns, "web-applied", "web", "10.2.0.1")
	applied.Annotations = map[string]string{workv1alpha1.WorkNamespaceAnnotation: "karmada-es-member1", workv1alpha1.WorkNameAnnotation: "x"}
	if err := e.member.Create(t.Context(), applied); err != nil {
		t.Fatal(err)
	}
	if err := e.member.Create(t.Context(), serviceExport(ns, "web")); err != nil {
		t.Fatal(err)
	}
	e.exportWork(t, ns, "web")

	abc, def := names.Work(ns, "web-abc", "EndpointSlice"), names.Work(ns, "web-def", "EndpointSlice")
	e.collectedAre(t, ns, "web", map[string][]string{abc: {"10.1.0.1"}})

	s := &discoveryv1.EndpointSlice{}
	if err := e.member.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web-abc"}, s); err != nil {
		t.Fatal(err)
	}
	s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.0.2"}})
	if err := e.member.Update(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if err := e.member.Create(t.Context(), slice(ns, "web-def", "web", "10.1.0.3")); err != nil {
		t.Fatal(err)
	}
	e.collectedAre(t, ns, "web", map[string][]string{abc: {"10.1.0.1", "10.1.0.2"}, def: {"10.1.0.3"}})

	if err := e.member.Delete(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	e.collectedAre(t, ns, "web", map[string][]string{def: {"10.1.0.3"}})
	if got, err := e.collected(t.Context(), ns, "db"); err != nil || len(got) > 0 {
		t.Fatalf("collected Works of the unexported db: %v, %v", got, err)
	}

	// A Work a MultiClusterService also collects keeps that part when the
	// export ends; the other goes.
	mcs := &workv1alpha1.Work{}
	if err := e.cp.Get(t.Context(), client.ObjectKey{Namespace: names.ExecutionSpace("member1"), Name: def}, mcs); err != nil {
		t.Fatal(err)
	}
	mcs.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] = "MultiClusterService.ServiceExport"
	if err := e.cp.Update(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	if err := e.member.Delete(t.Context(), serviceExport(ns, "web")); err != nil {
		t.Fatal(err)
	}
	e.collectedAre(t, ns, "web", map[string][]string{})
	controllertest.WaitFor(t, "the MultiClusterService's Work kept, without the export's labels", func(ctx context.Context) (bool, error) {
		w := &workv1alpha1.Work{}
		if err := e.cp.Get(ctx, client.ObjectKeyFromObject(mcs), w); err != nil {
			return false, err
		}
		return w.DeletionTimestamp == nil && w.Labels[workv1alpha1.EndpointSliceWorkManagedByLabel] == "MultiClusterService" &&
			w.Labels[workv1alpha1.ServiceNameLabel] == "", nil
	})
}
