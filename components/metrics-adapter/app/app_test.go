package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/members"
	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/resourcemetrics"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// podMetricsList is the part of metrics.k8s.io/v1beta1 PodMetricsList the
// test reads, decoded from the raw answer as kubectl get --raw shows it.
type podMetricsList struct {
	Kind  string `json:"kind"`
	Items []struct {
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// TestMetricsOfAPropagatedDeployment propagates a Deployment to two
// members, reads its pods' metrics from the control plane's
// metrics.k8s.io, and turns the simulated CPU up and down without
// touching the pods.
func TestMetricsOfAPropagatedDeployment(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{Members: 2, Nodes: localfed.NodeOptions{Count: 1}, Metrics: true, MetricsAdapter: true})
	ctx := t.Context()
	cp := controlPlaneClient(t, f)
	runPropagation(t, f)
	// A member still tainted not-ready when the Deployment is scheduled
	// would be left out of it.
	for _, m := range f.MemberNames() {
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			var c clusterv1alpha1.Cluster
			if err := cp.Get(ctx, client.ObjectKey{Name: m}, &c); err != nil {
				return false, nil
			}
			return members.IsReady(&c) && len(c.Spec.Taints) == 0, nil
		})
		if err != nil {
			t.Fatalf("waiting for Cluster %s to be Ready and untainted: %v", m, err)
		}
	}

	const ns = "metrics-adapter-test"
	if err := cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			},
		},
	}
	// A pod of another app in the namespace, which the selector leaves out.
	other := dep.DeepCopy()
	other.Name = "other"
	other.Spec.Replicas = ptr.To[int32](1)
	other.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	other.Spec.Template.Labels = map[string]string{"app": "other"}
	for _, d := range []*appsv1.Deployment{dep, other} {
		if err := cp.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: f.MemberNames()}},
		},
	}
	if err := cp.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}

	kube := kubernetes.NewForConfigOrDie(f.ControlPlane.Config)
	path := fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods", ns)
	// seen waits until the control plane lists the two pods of web in each
	// member, every container using cpu (within 10%).
	seen := func(cpu string) podMetricsList {
		t.Helper()
		want := resource.MustParse(cpu)
		var last podMetricsList
		var lastErr error
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			body, err := kube.Discovery().RESTClient().Get().AbsPath(path).Param("labelSelector", "app=web").DoRaw(ctx)
			if err != nil {
				lastErr = err
				return false, nil
			}
			last = podMetricsList{}
			if err := json.Unmarshal(body, &last); err != nil {
				return false, err
			}
			perMember := map[string]int{}
			for _, item := range last.Items {
				for _, c := range item.Containers {
					if !near(c.Usage[corev1.ResourceCPU], want) {
						return false, nil
					}
				}
				perMember[item.Metadata.Annotations[resourcemetrics.QueryFromClusterAnnotation]]++
			}
			return perMember["member1"] == 2 && perMember["member2"] == 2 && len(last.Items) == 4, nil
		})
		if err != nil {
			t.Fatalf("waiting for 2 pods of web per member at %s CPU: %v (last answer %+v, last error %v)", cpu, err, last, lastErr)
		}
		return last
	}
	first := seen("1m")
	if first.Kind != "PodMetricsList" {
		t.Errorf("kind %q, want PodMetricsList", first.Kind)
	}
	names := podNames(first)

	began := time.Now()
	if err := f.SetPodUsage(ctx, ns, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400m")}); err != nil {
		t.Fatal(err)
	}
	if got := podNames(seen("400m")); !slices.Equal(got, names) {
		t.Errorf("pods changed while the usage rose: %v, then %v", names, got)
	}
	// Reported, not asserted: how long a change takes to show.
	t.Logf("the raised CPU showed in the control plane after %s", time.Since(began).Round(100*time.Millisecond))
	if err := f.SetPodUsage(ctx, ns, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}); err != nil {
		t.Fatal(err)
	}
	if got := podNames(seen("50m")); !slices.Equal(got, names) {
		t.Errorf("pods changed while the usage fell: %v, then %v", names, got)
	}

	t.Run("get one pod by name", func(t *testing.T) {
		body, err := kube.Discovery().RESTClient().Get().AbsPath(path, names[0]).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Metadata.Name != names[0] || got.Metadata.Annotations[resourcemetrics.QueryFromClusterAnnotation] == "" {
			t.Errorf("got %+v, want pod %s marked with its member", got.Metadata, names[0])
		}
	})

	t.Run("nodes of every member", func(t *testing.T) {
		body, err := kube.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got podMetricsList
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		nodes := make([]string, 0, len(got.Items))
		for _, item := range got.Items {
			nodes = append(nodes, item.Metadata.Annotations[resourcemetrics.QueryFromClusterAnnotation]+"/"+item.Metadata.Name)
		}
		if want := []string{"member1/member1-node1", "member2/member2-node1"}; !slices.Equal(nodes, want) {
			t.Errorf("node metrics of %v, want %v", nodes, want)
		}
	})

	t.Run("custom metrics of members that serve none", func(t *testing.T) {
		body, err := kube.Discovery().RESTClient().Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2").DoRaw(ctx)
		if err != nil {
			t.Fatalf("custom.metrics.k8s.io/v1beta2 discovery: %v", err)
		}
		var list metav1.APIResourceList
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.APIResources) != 0 {
			t.Errorf("custom metrics listed with no member serving any: %v", list.APIResources)
		}
		_, err = kube.Discovery().RESTClient().Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces", ns, "pods/*/requests").DoRaw(ctx)
		if err == nil {
			t.Error("a custom metric no member has was found")
		}
	})
}

func podNames(l podMetricsList) []string {
	names := make([]string, 0, len(l.Items))
	for _, item := range l.Items {
		names = append(names, item.Metadata.Name)
	}
	slices.Sort(names)
	return names
}

// near reports whether got is within 10% of want.
func near(got, want resource.Quantity) bool {
	g, w := got.AsApproximateFloat64(), want.AsApproximateFloat64()
	return math.Abs(g-w) <= w/10
}

func controlPlaneClient(t *testing.T, f *localfed.Federation) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runPropagation runs the controller-manager (which also marks the
// members Ready) and the scheduler in this process until the test ends.
func runPropagation(t *testing.T, f *localfed.Federation) {
	t.Helper()
	// Clients built outside a manager log through controller-runtime's
	// global logger, which would otherwise complain it was never set.
	ctrllog.SetLogger(logr.Discard())
	cm, err := cmapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-status-update-frequency=2s", "--cluster-health-probe-period=2s")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := schedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- cmapp.Run(ctx, f.ControlPlane.Config, cm, logr.Discard()) }()
	go func() { done <- schedapp.Run(ctx, f.ControlPlane.Config, sched, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("stopping the controller-manager or scheduler: %v", err)
			}
		}
	})
}
