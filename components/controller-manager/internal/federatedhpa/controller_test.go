package federatedhpa_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/federatedhpa"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

// server is the control plane and member m1; member is member m2.
var server, member *controllertest.APIServer

func TestMain(m *testing.M) {
	scheme, err := controllertest.NewScheme()
	if err == nil {
		err = autoscalingv1alpha1.AddToScheme(scheme)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(controllertest.Main(m, &server, scheme))
}

// cpuMetrics are the CPU samples the test gives the controller, by member
// and pod, in millicores: a bare API server serves no metrics API.
type cpuMetrics struct {
	mu     sync.Mutex
	values map[federatedhpa.PodKey]int64
}

func (f *cpuMetrics) set(millicores int64, pods ...federatedhpa.PodKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.values == nil {
		f.values = map[federatedhpa.PodKey]int64{}
	}
	for _, p := range pods {
		f.values[p] = millicores
	}
}

func (f *cpuMetrics) Resource(_ context.Context, res corev1.ResourceName, _ string, _ labels.Selector, _ string) (federatedhpa.PodMetrics, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if res != corev1.ResourceCPU {
		return nil, time.Time{}, fmt.Errorf("no %s metrics", res)
	}
	out := federatedhpa.PodMetrics{}
	for k, v := range f.values {
		out[k] = federatedhpa.PodMetric{Value: v, Timestamp: time.Now(), Window: 30 * time.Second}
	}
	return out, time.Now(), nil
}

func (f *cpuMetrics) Pods(context.Context, string, string, labels.Selector, labels.Selector) (federatedhpa.PodMetrics, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("no custom metrics")
}

func (f *cpuMetrics) Object(context.Context, string, string, autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, fmt.Errorf("no custom metrics")
}

func (f *cpuMetrics) External(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("no external metrics")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// federation starts the controller with members m1 (the control plane's
// own API server) and m2, both Ready, and returns its metrics.
func federation(t *testing.T) *cpuMetrics {
	t.Helper()
	if member == nil {
		var err error
		member, err = controllertest.StartAPIServer(server.Client.Scheme())
		must(t, err)
		// Stopped with the package's tests: see TestZZStopMember.
	}
	metrics := &cpuMetrics{}
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, env *controllertest.Env) error {
		if err := autoscalingv1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
			return err
		}
		env.Members.SetLocal("m1", server.Config)
		env.Members.SetLocal("m2", member.Config)
		return (&federatedhpa.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(federatedhpa.ControllerName),
			Members: env.Members, Metrics: metrics, SyncPeriod: time.Second, Tolerance: 0.1,
			DownscaleStabilization: 5 * time.Minute, CPUInitializationPeriod: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second,
		}).SetupWithManager(mgr)
	})
	for _, name := range []string{"m1", "m2"} {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{
			SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"}} // reached through SetLocal instead
		if err := server.Client.Create(t.Context(), c); err != nil {
			if gerr := server.Client.Get(t.Context(), client.ObjectKeyFromObject(c), c); gerr != nil {
				t.Fatal(err)
			}
		}
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}}
		must(t, server.Client.Status().Update(t.Context(), c))
	}
	return metrics
}

// workload creates, in namespace ns, a Deployment template of replicas
// pods requesting 1 CPU, its binding dividing them between m1 and m2, and
// the running pods in each member (no controller runs them here): pods of
// the same names in both, told apart by their member.
func workload(t *testing.T, ns, name string, replicas int32) []federatedhpa.PodKey {
	t.Helper()
	ctx := t.Context()
	for _, c := range []client.Client{server.Client, member.Client} {
		must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	lbl := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
	must(t, server.Client.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl}, Spec: spec}},
	}))
	half := replicas / 2
	must(t, server.Client.Create(ctx, &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
			Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: half}, {Name: "m2", Replicas: replicas - half}},
		},
	}))
	var keys []federatedhpa.PodKey
	started := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	for cluster, count := range map[string]int32{"m1": half, "m2": replicas - half} {
		c := server.Client
		if cluster == "m2" {
			c = member.Client
		}
		for i := range count {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i), Labels: lbl}, Spec: spec}
			must(t, c.Create(ctx, pod))
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started, Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}
			must(t, c.Status().Update(ctx, pod))
			keys = append(keys, federatedhpa.PodKey{Cluster: cluster, Name: pod.Name})
		}
	}
	return keys
}

func cpuHPA(ns, name string, minReplicas, maxReplicas int32, b *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    ptr.To(minReplicas), MaxReplicas: maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
			Behavior: b,
		},
	}
}

func replicasOf(ctx context.Context, ns, name string) (int32, error) {
	d := &appsv1.Deployment{}
	if err := server.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return 0, err
	}
	return *d.Spec.Replicas, nil
}

func condition(ctx context.Context, key client.ObjectKey, typ autoscalingv2.HorizontalPodAutoscalerConditionType) (*autoscalingv1alpha1.FederatedHPA, *autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	f := &autoscalingv1alpha1.FederatedHPA{}
	if err := server.Client.Get(ctx, key, f); err != nil {
		return nil, nil, err
	}
	for i := range f.Status.Conditions {
		if f.Status.Conditions[i].Type == typ {
			return f, &f.Status.Conditions[i], nil
		}
	}
	return f, nil, nil
}

func hasEvent(ctx context.Context, ns, name, reason string) (bool, error) {
	var list corev1.EventList
	if err := server.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return false, err
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			return true, nil
		}
	}
	return false, nil
}

func TestScaleUpThenHoldDown(t *testing.T) {
	metrics := federation(t)
	const ns = "scale-up"
	pods := workload(t, ns, "web", 4)
	// 90% of the request against a target of 50%: 4 × 1.8 → 8.
	metrics.set(900, pods...)
	fhpa := cpuHPA(ns, "web", 1, 8, nil)
	must(t, server.Client.Create(t.Context(), fhpa))
	key := client.ObjectKeyFromObject(fhpa)

	controllertest.WaitFor(t, "web scaled to 8", func(ctx context.Context) (bool, error) {
		n, err := replicasOf(ctx, ns, "web")
		return n == 8, err
	})
	controllertest.WaitFor(t, "the status to tell", func(ctx context.Context) (bool, error) {
		f, active, err := condition(ctx, key, autoscalingv2.ScalingActive)
		if err != nil || active == nil || f.Status.DesiredReplicas != 8 || f.Status.LastScaleTime == nil || len(f.Status.CurrentMetrics) != 1 {
			return false, err
		}
		cur := f.Status.CurrentMetrics[0].Resource
		return active.Status == corev1.ConditionTrue && active.Reason == federatedhpa.ReasonValidMetricFound &&
			cur != nil && ptr.Deref(cur.Current.AverageUtilization, 0) == 90, nil
	})
	controllertest.WaitFor(t, "a SuccessfulRescale event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "web", federatedhpa.ReasonSuccessfulRescale)
	})
	// The members still run 4 of the 8: the 4 read stand for half the
	// replicas, so the metrics now ask for more than maxReplicas.
	controllertest.WaitFor(t, "ScalingLimited by maxReplicas", func(ctx context.Context) (bool, error) {
		_, c, err := condition(ctx, key, autoscalingv2.ScalingLimited)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == federatedhpa.ReasonTooManyReplicas, err
	})

	// Idle now: the default 5-minute scale-down window holds the count.
	metrics.set(50, pods...)
	controllertest.WaitFor(t, "the scale down stabilized", func(ctx context.Context) (bool, error) {
		_, c, err := condition(ctx, key, autoscalingv2.AbleToScale)
		return c != nil && c.Reason == federatedhpa.ReasonScaleDownStabilized, err
	})
	if n, err := replicasOf(t.Context(), ns, "web"); err != nil || n != 8 {
		t.Errorf("web has %d replicas (%v), want 8 held by the stabilization window", n, err)
	}
}

func TestScaleDownPolicy(t *testing.T) {
	metrics := federation(t)
	const ns = "scale-down"
	pods := workload(t, ns, "api", 4)
	// 10% of the request against 50%: the metrics ask for 1, but at most
	// half the replicas may go per 10 minutes.
	metrics.set(100, pods...)
	fhpa := cpuHPA(ns, "api", 1, 10, &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 600}}},
	})
	must(t, server.Client.Create(t.Context(), fhpa))
	controllertest.WaitFor(t, "api scaled down to 2", func(ctx context.Context) (bool, error) {
		n, err := replicasOf(ctx, ns, "api")
		return n == 2, err
	})
	controllertest.WaitFor(t, "ScalingLimited by the scale-down policy", func(ctx context.Context) (bool, error) {
		_, c, err := condition(ctx, client.ObjectKeyFromObject(fhpa), autoscalingv2.ScalingLimited)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == federatedhpa.ReasonScaleDownLimit, err
	})
	if n, err := replicasOf(t.Context(), ns, "api"); err != nil || n != 2 {
		t.Errorf("api has %d replicas (%v), want 2 until the policy's period is over", n, err)
	}
}

func TestNoBinding(t *testing.T) {
	federation(t)
	const ns = "no-binding"
	ctx := t.Context()
	must(t, server.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	lbl := map[string]string{"app": "lone"}
	must(t, server.Client.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lone"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}},
	}))
	fhpa := cpuHPA(ns, "lone", 1, 5, nil)
	must(t, server.Client.Create(ctx, fhpa))
	controllertest.WaitFor(t, "AbleToScale false for want of a binding", func(ctx context.Context) (bool, error) {
		_, c, err := condition(ctx, client.ObjectKeyFromObject(fhpa), autoscalingv2.AbleToScale)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == federatedhpa.ReasonFailedGetBinding, err
	})
	controllertest.WaitFor(t, "a FailedGetBindings event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "lone", federatedhpa.ReasonFailedGetBindings)
	})
	if n, err := replicasOf(ctx, ns, "lone"); err != nil || n != 2 {
		t.Errorf("lone has %d replicas (%v), want its own 2", n, err)
	}
}

// TestOneMetricFails: memory metrics cannot be read, but CPU asks for more
// replicas, so the target is scaled; the failure is reported and only
// CPU has a status.
func TestOneMetricFails(t *testing.T) {
	metrics := federation(t)
	const ns = "one-fails"
	pods := workload(t, ns, "mixed", 2)
	metrics.set(1000, pods...)
	fhpa := cpuHPA(ns, "mixed", 1, 4, nil)
	fhpa.Spec.Metrics = append(fhpa.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}})
	must(t, server.Client.Create(t.Context(), fhpa))
	controllertest.WaitFor(t, "mixed scaled to 4 on CPU", func(ctx context.Context) (bool, error) {
		n, err := replicasOf(ctx, ns, "mixed")
		return n == 4, err
	})
	controllertest.WaitFor(t, "a FailedGetResourceMetric event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, ns, "mixed", federatedhpa.ReasonFailedGetResourceMetric)
	})
	controllertest.WaitFor(t, "the CPU metric's status alone", func(ctx context.Context) (bool, error) {
		f := &autoscalingv1alpha1.FederatedHPA{}
		err := server.Client.Get(ctx, client.ObjectKeyFromObject(fhpa), f)
		return err == nil && f.Status.DesiredReplicas == 4 && len(f.Status.CurrentMetrics) == 1 &&
			f.Status.CurrentMetrics[0].Resource != nil && f.Status.CurrentMetrics[0].Resource.Name == corev1.ResourceCPU, err
	})
}

// TestZZStopMember stops member m2's API server after the tests that use
// it (Go runs a package's tests in source order).
func TestZZStopMember(t *testing.T) {
	if member != nil {
		must(t, member.Stop())
		member = nil
	}
}
