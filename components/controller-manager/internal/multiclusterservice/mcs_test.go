package multiclusterservice_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/multiclusterservice"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/serviceexport"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// A control plane and one bare member API server, for the collect
// controller; the others only use the control plane.
var fed = &localfedtest.Shared{Options: localfed.Options{Members: 1, APIServerOnlyMembers: true, StartTimeout: 5 * time.Minute}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// clusters registers Ready Clusters with their execution namespaces; the
// controllers under test only read them.
func clusters(t *testing.T, c client.Client, clusterNames ...string) {
	t.Helper()
	for _, name := range clusterNames {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1alpha1.ClusterSpec{APIEndpoint: "https://127.0.0.1:1", SyncMode: clusterv1alpha1.Push}}
		if err := c.Create(t.Context(), cl); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(cl), cl); err != nil {
			t.Fatal(err)
		}
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
			Reason: clusterv1alpha1.ClusterReasonReady, Message: "set by the test"})
		if err := c.Status().Update(t.Context(), cl); err != nil {
			t.Fatal(err)
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(name)}}
		if err := c.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func namespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func crossCluster(ns, name string, providers, consumers []string) *networkingv1alpha1.MultiClusterService {
	mcs := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			networkingv1alpha1.MultiClusterServicePermanentIDLabel: "6b0c7a52-0000-4000-8000-0000000000aa"}},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster}},
	}
	for _, p := range providers {
		mcs.Spec.ProviderClusters = append(mcs.Spec.ProviderClusters, networkingv1alpha1.ClusterSelector{Name: p})
	}
	for _, c := range consumers {
		mcs.Spec.ConsumerClusters = append(mcs.Spec.ConsumerClusters, networkingv1alpha1.ClusterSelector{Name: c})
	}
	return mcs
}

// TestPropagatesService: the MultiClusterService takes its Service from
// the policy that claimed it, binds it to providers and consumers, marks
// the providers with Works, and on deletion gives the Service back,
// keeping its binding, and removes the Works.
func TestPropagatesService(t *testing.T) {
	env := controllertest.Start(t, fed.Get(t).ControlPlane.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&multiclusterservice.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(multiclusterservice.ControllerName)}).SetupWithManager(mgr)
	})
	c := env.Client
	clusters(t, c, "member1", "member2", "member3")
	ns := "propagate"
	namespace(t, c, ns)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web",
			Labels:      map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"},
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "pp", policyv1alpha1.PropagationPolicyNamespaceAnnotation: ns}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if err := c.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	mcs := crossCluster(ns, "web", []string{"member1"}, []string{"member2", "member3"})
	if err := c.Create(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	rbKey := client.ObjectKey{Namespace: ns, Name: "web-service"}
	workKey := client.ObjectKey{Namespace: names.ExecutionSpace("member1"), Name: names.Work(ns, "web", multiclusterservice.Kind)}
	controllertest.WaitFor(t, "Service claimed, bound and the provider marked", func(ctx context.Context) (bool, error) {
		s := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
			return false, err
		}
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, rbKey, rb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, workKey, w); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		m := &networkingv1alpha1.MultiClusterService{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mcs), m); err != nil {
			return false, err
		}
		return s.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] == multiclusterservice.Kind &&
			s.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" && s.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] == "" &&
			s.Annotations[networkingv1alpha1.MultiClusterServiceNameAnnotation] == "web" &&
			rb.Labels[workv1alpha2.BindingManagedByLabel] == multiclusterservice.Kind &&
			slices.Equal(rb.Spec.Placement.ClusterAffinity.ClusterNames, []string{"member1", "member2", "member3"}) &&
			rb.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite && rb.Spec.Resource.UID == s.UID &&
			ptr.Deref(w.Spec.SuspendDispatching, false) &&
			meta.IsStatusConditionTrue(m.Status.Conditions, networkingv1alpha1.MCSServiceAppliedConditionType) &&
			controllerutil.ContainsFinalizer(m, networkingv1alpha1.MCSControllerFinalizer), nil
	})
	for _, consumer := range []string{"member2", "member3"} {
		err := c.Get(t.Context(), client.ObjectKey{Namespace: names.ExecutionSpace(consumer), Name: workKey.Name}, &workv1alpha1.Work{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("provider Work in consumer %s: want not found, got %v", consumer, err)
		}
	}

	if err := c.Delete(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "Service released, binding kept, Work and MultiClusterService gone", func(ctx context.Context) (bool, error) {
		s := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
			return false, err
		}
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, rbKey, rb); err != nil {
			return false, err
		}
		errWork := c.Get(ctx, workKey, &workv1alpha1.Work{})
		errMCS := c.Get(ctx, client.ObjectKeyFromObject(mcs), &networkingv1alpha1.MultiClusterService{})
		return s.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] == "" && rb.Labels[workv1alpha2.BindingManagedByLabel] == "" &&
			apierrors.IsNotFound(errWork) && apierrors.IsNotFound(errMCS), nil
	})
}

// TestDispatch: a slice collected from the provider goes, as
// <provider>-<slice>, into a Work of every consumer but the provider;
// consumers dropped lose it, and the collected Work's deletion withdraws
// the rest before the finalizer goes.
func TestDispatch(t *testing.T) {
	env := controllertest.Start(t, fed.Get(t).ControlPlane.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&multiclusterservice.DispatchReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	c := env.Client
	clusters(t, c, "member1", "member2", "member3")
	ns := "dispatch"
	namespace(t, c, ns)
	mcs := crossCluster(ns, "web", []string{"member1"}, []string{"member1", "member2", "member3"})
	if err := c.Create(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "web-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}},
	}
	raw, _ := json.Marshal(slice)
	collected := serviceexport.CollectedWork(names.ExecutionSpace("member1"), names.Work(ns, "web-abc", "EndpointSlice"), "", "", "", raw)
	collected.Finalizers = nil
	collected.Labels = map[string]string{
		workv1alpha1.MultiClusterServiceNamespaceLabel: ns, workv1alpha1.MultiClusterServiceNameLabel: "web",
		workv1alpha1.EndpointSliceWorkManagedByLabel: multiclusterservice.Kind,
	}
	if err := c.Create(t.Context(), collected); err != nil {
		t.Fatal(err)
	}
	dispatchedName := names.Work(ns, multiclusterservice.DispatchedName("member1", "web-abc"), "EndpointSlice")
	in := func(ctx context.Context, cluster string) (*discoveryv1.EndpointSlice, error) {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(cluster), Name: dispatchedName}, w); err != nil {
			return nil, err
		}
		var s discoveryv1.EndpointSlice
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &s); err != nil {
			return nil, err
		}
		if w.Annotations[workv1alpha1.EndpointSliceProvisionClusterAnnotation] != "member1" || ptr.Deref(w.Spec.SuspendDispatching, false) {
			return nil, nil
		}
		return &s, nil
	}
	controllertest.WaitFor(t, "dispatched to member2 and member3", func(ctx context.Context) (bool, error) {
		for _, consumer := range []string{"member2", "member3"} {
			s, err := in(ctx, consumer)
			if err != nil || s == nil {
				return false, client.IgnoreNotFound(err)
			}
			if s.Name != "member1-web-abc" || s.Labels[discoveryv1.LabelServiceName] != "web" ||
				s.Labels[discoveryv1.LabelManagedBy] != workv1alpha1.EndpointSliceDispatchControllerLabelValue || s.Endpoints[0].Addresses[0] != "10.1.0.1" {
				return false, nil
			}
		}
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(collected), w); err != nil {
			return false, err
		}
		return controllerutil.ContainsFinalizer(w, networkingv1alpha1.MCSEndpointSliceDispatchControllerFinalizer), nil
	})
	if _, err := in(t.Context(), "member1"); !apierrors.IsNotFound(err) {
		t.Fatalf("dispatched to the provider itself: %v", err)
	}

	if err := c.Get(t.Context(), client.ObjectKeyFromObject(mcs), mcs); err != nil {
		t.Fatal(err)
	}
	mcs.Spec.ConsumerClusters = []networkingv1alpha1.ClusterSelector{{Name: "member2"}}
	if err := c.Update(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "withdrawn from member3", func(ctx context.Context) (bool, error) {
		_, err := in(ctx, "member3")
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	if err := c.Delete(t.Context(), collected); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "withdrawn from member2 and the collected Work gone", func(ctx context.Context) (bool, error) {
		_, err := in(ctx, "member2")
		errWork := c.Get(ctx, client.ObjectKeyFromObject(collected), &workv1alpha1.Work{})
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(errWork), nil
	})
}
