package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/config/crd"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// mcsCRDs installs the ServiceExport and ServiceImport CRDs in every member,
// as a fleet using multi-cluster services has them, and removes them when
// the test ends.
func mcsCRDs(t *testing.T) {
	t.Helper()
	for _, file := range []string{"bases/multicluster.x-k8s.io_serviceexports.yaml", "bases/multicluster.x-k8s.io_serviceimports.yaml"} {
		data, err := fs.ReadFile(crd.Bases, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fed.Members {
			obj := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(data, obj); err != nil {
				t.Fatal(err)
			}
			if err := m.Client.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("creating CRD %s in %s: %v", obj.Name, m.Name, err)
			}
			t.Cleanup(func() { _ = m.Client.Delete(context.Background(), obj) })
			eventually(t, "CRD "+obj.Name+" established in "+m.Name, func(ctx context.Context) (bool, error) {
				got := &apiextensionsv1.CustomResourceDefinition{}
				if err := m.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
					return false, err
				}
				for _, c := range got.Status.Conditions {
					if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
						return true, nil
					}
				}
				return false, nil
			})
		}
	}
}

// mcsObject is an object of the multicluster.x-k8s.io API as unstructured,
// which the suite's client writes without the types in its scheme.
func mcsObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"namespace": ns, "name": name},
	}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

// podIPs are the IPs of the ready pods labelled app=<app> in ns of m.
func podIPs(ctx context.Context, m *localfed.Cluster, ns, app string) ([]string, error) {
	var pods corev1.PodList
	if err := m.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	var ips []string
	for _, p := range pods.Items {
		ready := p.DeletionTimestamp == nil && p.Status.PodIP != ""
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
				ready = false
			}
		}
		if ready {
			ips = append(ips, p.Status.PodIP)
		}
	}
	slices.Sort(ips)
	return ips, nil
}

// sliceIPs are the addresses of the EndpointSlices of Service service in ns
// of m.
func sliceIPs(ctx context.Context, m *localfed.Cluster, ns, service string) ([]string, error) {
	var list discoveryv1.EndpointSliceList
	if err := m.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return nil, err
	}
	var ips []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			ips = append(ips, e.Addresses...)
		}
	}
	slices.Sort(ips)
	return ips, nil
}

// importedMatchesExported waits until member2's derived-serve EndpointSlices
// list exactly the ready pods of serve in member1, want of them.
func importedMatchesExported(t *testing.T, ns string, want int) {
	t.Helper()
	m1, m2 := member(t, "member1"), member(t, "member2")
	eventually(t, fmt.Sprintf("member2's derived-serve listing member1's %d pod IPs", want), func(ctx context.Context) (bool, error) {
		exported, err := podIPs(ctx, m1, ns, "serve")
		if err != nil || len(exported) != want {
			return false, err
		}
		imported, err := sliceIPs(ctx, m2, ns, "derived-serve")
		if err != nil {
			return false, err
		}
		if !slices.Equal(exported, imported) {
			return false, fmt.Errorf("member1 pods %v, member2 derived-serve endpoints %v", exported, imported)
		}
		return true, nil
	})
}

// TestServiceExportImport exports a Service of member1 and imports it into
// member2: member2 gets the Service derived-serve whose EndpointSlices list
// member1's pod IPs, which follow the Deployment's scaling; unexporting
// removes them, and deleting everything leaves nothing in any member.
func TestServiceExportImport(t *testing.T) {
	t.Parallel()
	mcsCRDs(t)
	ns := namespace(t, "e2e-mcs")
	labels := map[string]string{"app": "serve"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "serve", Image: "serve"}}},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
		}},
	}
	export := mcsObject("ServiceExport", ns, "serve", nil)
	imp := mcsObject("ServiceImport", ns, "serve", map[string]any{
		"type":  "ClusterSetIP",
		"ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"}},
	})
	for _, o := range []client.Object{d, svc, export, imp} {
		create(t, o)
	}
	create(t, propagationPolicy(ns, "serve", []string{"member1"},
		policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "serve"},
		policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Service", Name: "serve"},
		policyv1alpha1.ResourceSelector{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceExport", Name: "serve"}))
	create(t, propagationPolicy(ns, "serve-import", []string{"member2"},
		policyv1alpha1.ResourceSelector{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport", Name: "serve"}))

	inMembers(t, []string{"member2"}, client.ObjectKey{Namespace: ns, Name: "derived-serve"}, func() *corev1.Service { return &corev1.Service{} },
		"derived Service", func(s *corev1.Service) bool { return len(s.Spec.Ports) == 1 && s.Spec.Ports[0].Port == 80 })
	importedMatchesExported(t, ns, 2)

	update(t, d, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) })
	importedMatchesExported(t, ns, 3)
	update(t, d, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](1) })
	importedMatchesExported(t, ns, 1)

	// Unexport: the collected slices go from the control plane and member2;
	// the import's derived Service stays.
	remove(t, export)
	eventually(t, "member2's derived-serve EndpointSlices gone", func(ctx context.Context) (bool, error) {
		ips, err := sliceIPs(ctx, member(t, "member2"), ns, "derived-serve")
		return len(ips) == 0 && err == nil, err
	})
	noCollected(t, ns)
	if err := member(t, "member2").Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "derived-serve"}, &corev1.Service{}); err != nil {
		t.Fatalf("derived-serve in member2 after unexport: %v", err)
	}

	// Export again, then delete everything: nothing is left in any member.
	create(t, mcsObject("ServiceExport", ns, "serve", nil))
	importedMatchesExported(t, ns, 1)
	for _, o := range []client.Object{imp, mcsObject("ServiceExport", ns, "serve", nil), svc, d} {
		remove(t, o)
	}
	goneFrom(t, allMembers(), client.ObjectKey{Namespace: ns, Name: "derived-serve"}, &corev1.Service{})
	goneFrom(t, allMembers(), client.ObjectKey{Namespace: ns, Name: "serve"}, &corev1.Service{})
	for _, m := range fed.Members {
		eventually(t, "no derived-serve EndpointSlices in "+m.Name, func(ctx context.Context) (bool, error) {
			ips, err := sliceIPs(ctx, m, ns, "derived-serve")
			return len(ips) == 0 && err == nil, err
		})
		eventually(t, "no ServiceExport or ServiceImport in "+m.Name, func(ctx context.Context) (bool, error) {
			for _, kind := range []string{"ServiceExport", "ServiceImport"} {
				list := &unstructured.UnstructuredList{}
				list.SetAPIVersion("multicluster.x-k8s.io/v1alpha1")
				list.SetKind(kind + "List")
				if err := m.Client.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) > 0 {
					return false, err
				}
			}
			return true, nil
		})
	}
	noCollected(t, ns)
	eventually(t, "derived-serve gone from the control plane", func(ctx context.Context) (bool, error) {
		err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: "derived-serve"}, &corev1.Service{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// noCollected waits until the control plane holds no collected Work and no
// imported EndpointSlice of the Services of ns.
func noCollected(t *testing.T, ns string) {
	t.Helper()
	eventually(t, "no collected Works or imported EndpointSlices of "+ns, func(ctx context.Context) (bool, error) {
		var works workv1alpha1.WorkList
		if err := cp.List(ctx, &works, client.MatchingLabels{workv1alpha1.ServiceNamespaceLabel: ns}); err != nil {
			return false, err
		}
		var eps discoveryv1.EndpointSliceList
		if err := cp.List(ctx, &eps, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if len(works.Items) > 0 || len(eps.Items) > 0 {
			var left []string
			for _, w := range works.Items {
				left = append(left, fmt.Sprintf("Work %s/%s (finalizers %v, deleting %v)", w.Namespace, w.Name, w.Finalizers, w.DeletionTimestamp != nil))
			}
			for _, e := range eps.Items {
				left = append(left, fmt.Sprintf("EndpointSlice %s (labels %v)", e.Name, e.Labels))
			}
			t.Logf("left in the control plane: %v", left)
			return false, nil
		}
		return true, nil
	})
}

// TestMultiClusterService exposes a Service of member1 to member2 and
// member3 with a CrossCluster MultiClusterService: the Service reaches the
// three, and member2 and member3 get EndpointSlices listing member1's pod
// IPs, which follow the Deployment's scaling; deleting the
// MultiClusterService withdraws them, and deleting the rest leaves nothing
// in any member.
func TestMultiClusterService(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-mcs-cross")
	labels := map[string]string{"app": "cross"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "cross", Image: "cross"}}},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
		}},
	}
	create(t, d)
	create(t, svc)
	create(t, propagationPolicy(ns, "cross", []string{"member1"},
		policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "cross"}))
	mcs := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{
			Types:            []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}},
			ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}, {Name: "member3"}},
		},
	}
	if err := cp.Create(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	consumers := []string{"member2", "member3"}
	inMembers(t, allMembers(), client.ObjectKeyFromObject(svc), func() *corev1.Service { return &corev1.Service{} }, "Service cross",
		func(*corev1.Service) bool { return true })
	dispatched := func(want int) {
		t.Helper()
		m1 := member(t, "member1")
		for _, name := range consumers {
			m := member(t, name)
			eventually(t, fmt.Sprintf("%s's dispatched EndpointSlices of cross listing member1's %d pod IPs", name, want), func(ctx context.Context) (bool, error) {
				exported, err := podIPs(ctx, m1, ns, "cross")
				if err != nil || len(exported) != want {
					return false, err
				}
				var list discoveryv1.EndpointSliceList
				if err := m.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{
					discoveryv1.LabelServiceName: "cross", discoveryv1.LabelManagedBy: workv1alpha1.EndpointSliceDispatchControllerLabelValue,
				}); err != nil {
					return false, err
				}
				var ips []string
				for _, s := range list.Items {
					for _, e := range s.Endpoints {
						ips = append(ips, e.Addresses...)
					}
				}
				slices.Sort(ips)
				return slices.Equal(ips, exported), nil
			})
		}
	}
	dispatched(2)
	update(t, d, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) })
	dispatched(3)

	if err := cp.Delete(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
	for _, name := range allMembers() {
		m := member(t, name)
		eventually(t, "dispatched EndpointSlices withdrawn from "+name, func(ctx context.Context) (bool, error) {
			var list discoveryv1.EndpointSliceList
			err := m.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelManagedBy: workv1alpha1.EndpointSliceDispatchControllerLabelValue})
			return err == nil && len(list.Items) == 0, err
		})
	}
	eventually(t, "no Works of the MultiClusterService left", func(ctx context.Context) (bool, error) {
		var works workv1alpha1.WorkList
		if err := cp.List(ctx, &works, client.MatchingLabels{workv1alpha1.MultiClusterServiceNamespaceLabel: ns}); err != nil {
			return false, err
		}
		return len(works.Items) == 0, nil
	})

	remove(t, svc)
	remove(t, d)
	goneFrom(t, allMembers(), client.ObjectKeyFromObject(svc), &corev1.Service{})
	goneFrom(t, allMembers(), client.ObjectKeyFromObject(d), &appsv1.Deployment{})
}
