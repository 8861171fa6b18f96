package descheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/estimatortest"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// One API server plays the control plane (bindings, the estimators'
// Services) and member2 (the workload, its ReplicaSet and pods), which a
// real scheduler estimator serves.
var (
	cfg  *rest.Config
	kube client.Client
)

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting the API server: %v\n", err)
		os.Exit(1)
	}
	code := 1
	if kube, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil {
		err = kube.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: estimatorrpc.DefaultServiceNamespace}})
	}
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

// workload creates, as kube-controller-manager and kube-scheduler would
// have, a Deployment whose current ReplicaSet has pending pods that have been
// unschedulable for the given times.
func workload(t *testing.T, ns, name string, pending ...time.Duration) {
	t.Helper()
	labels := map[string]string{"app": name}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(len(pending))), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	create(t, d)
	rsTemplate := *template.DeepCopy()
	rsTemplate.Labels = map[string]string{"app": name, appsv1.DefaultDeploymentUniqueLabelKey: "abc123"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-abc123", Labels: rsTemplate.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(len(pending))), Selector: &metav1.LabelSelector{MatchLabels: rsTemplate.Labels}, Template: rsTemplate},
	}
	create(t, rs)
	for i, since := range pending {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-abc123-%d", name, i), Labels: rsTemplate.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: rsTemplate.Spec,
		}
		create(t, pod)
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-since)),
		}}}
		if err := kube.Status().Update(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := kube.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// binding creates the ResourceBinding of Deployment ns/name scheduled by
// dynamic weights onto clusters, with the ready replicas each reports.
func binding(t *testing.T, ns, name string, clusters []workv1alpha2.TargetCluster, ready map[string]int32) *workv1alpha2.ResourceBinding {
	t.Helper()
	placement, _ := json.Marshal(policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}})
	var replicas int32
	for _, c := range clusters {
		replicas += c.Replicas
	}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-deployment", Annotations: map[string]string{policyv1alpha1.AppliedPlacementAnnotation: string(placement)}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
			Replicas: replicas,
			Clusters: clusters,
		},
	}
	create(t, rb)
	for _, c := range clusters {
		raw, _ := json.Marshal(map[string]int32{"replicas": c.Replicas, "readyReplicas": ready[c.Name]})
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: c.Name, Status: &runtime.RawExtension{Raw: raw}, Applied: true})
	}
	if err := kube.Status().Update(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func newDescheduler(t *testing.T, threshold time.Duration) *Descheduler {
	t.Helper()
	dialer, err := estimatorrpc.NewDialer(estimatorrpc.DialOptions{
		Port: estimatorrpc.DefaultPort, ServicePrefix: estimatorrpc.DefaultServicePrefix,
		ServiceNamespace: estimatorrpc.DefaultServiceNamespace, Timeout: 5 * time.Second,
	}, kube)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dialer.Close)
	return New(kube, dialer, Options{Interval: time.Hour, Threshold: threshold})
}

// clustersEventually waits for the binding's spec.clusters to be want.
func clustersEventually(t *testing.T, d *Descheduler, key client.ObjectKey, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d.Once(ctx)
		var rb workv1alpha2.ResourceBinding
		if err := kube.Get(ctx, key, &rb); err != nil {
			return false, err
		}
		got = describe(rb.Spec.Clusters)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("spec.clusters %s, want %s", got, want)
	}
}

func describe(clusters []workv1alpha2.TargetCluster) string {
	parts := make([]string, len(clusters))
	for i, c := range clusters {
		parts[i] = fmt.Sprintf("%s:%d", c.Name, c.Replicas)
	}
	return strings.Join(parts, ",")
}

// TestDeschedulesWhatTheEstimatorCounts: member2 has three pods of web
// Pending, two of them unschedulable for longer than the threshold; the
// descheduler takes those two off member2's share, through the real
// estimator, and leaves member1, whose replicas are all ready, unasked.
func TestDeschedulesWhatTheEstimatorCounts(t *testing.T) {
	estimatortest.Serve(t, cfg, kube, "member2")
	ns := namespace(t, "counted")
	workload(t, ns, "web", 10*time.Minute, 6*time.Minute, time.Minute)
	rb := binding(t, ns, "web", []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 3}}, map[string]int32{"member1": 2})

	d := newDescheduler(t, 5*time.Minute)
	// The estimator may still be filling its caches: it answers 0 until
	// then, and the descheduler tries again on its next pass.
	clustersEventually(t, d, client.ObjectKeyFromObject(rb), "member1:2,member2:1")

	// Once is idempotent: the pod under the threshold stays.
	d.Once(t.Context())
	var after workv1alpha2.ResourceBinding
	if err := kube.Get(t.Context(), client.ObjectKeyFromObject(rb), &after); err != nil {
		t.Fatal(err)
	}
	if got := describe(after.Spec.Clusters); got != "member1:2,member2:1" {
		t.Errorf("a second pass changed spec.clusters to %s", got)
	}
}

// TestUnansweredEstimatorTakesNothing: when member3's estimator does not
// answer, its lagging replicas stay where they are.
func TestUnansweredEstimatorTakesNothing(t *testing.T) {
	ns := namespace(t, "unanswered")
	workload(t, ns, "web", time.Hour)
	rb := binding(t, ns, "web", []workv1alpha2.TargetCluster{{Name: "member3", Replicas: 1}}, nil)
	// member3's Service points at a port nobody listens on.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	_ = lis.Close()
	create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: estimatorrpc.DefaultServiceNamespace, Name: estimatorrpc.DefaultServicePrefix + "-member3"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1",
			Ports: []corev1.ServicePort{{Port: estimatorrpc.DefaultPort, TargetPort: intstr.Parse(port)}}},
	})
	d := newDescheduler(t, time.Minute)
	if err := d.Deschedule(t.Context(), rb); err != nil {
		t.Fatalf("Deschedule: %v", err)
	}
	var after workv1alpha2.ResourceBinding
	if err := kube.Get(t.Context(), client.ObjectKeyFromObject(rb), &after); err != nil {
		t.Fatal(err)
	}
	if got := describe(after.Spec.Clusters); got != "member3:1" {
		t.Errorf("spec.clusters became %s without an estimator's answer", got)
	}
}
