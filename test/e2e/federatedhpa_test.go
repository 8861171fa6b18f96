package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// kwokUsageCPU, on a pod in a member, is the CPU kwok simulates its
// containers using (kwok's convention, read by the federation's
// ResourceUsage simulation on every scrape; no restart needed).
const kwokUsageCPU = "kwok.x-k8s.io/usage-cpu"

// needsPodMetrics skips a scenario when the control plane serves no
// metrics.k8s.io: the federation was started without members' metrics and
// the metrics adapter.
func needsPodMetrics(t *testing.T) {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(fed.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disc.ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err != nil {
		t.Skipf("the control plane serves no metrics.k8s.io/v1beta1 (%v): the scenario needs members' metrics and the metrics adapter", err)
	}
}

// setPodCPU has kwok simulate cpu for every pod of app in every member.
func setPodCPU(t *testing.T, ns, app, cpu string) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, kwokUsageCPU, cpu))
	for _, m := range fed.Members {
		var pods corev1.PodList
		if err := m.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			t.Fatalf("listing the pods of %s in %s: %v", app, m.Name, err)
		}
		for i := range pods.Items {
			if err := m.Client.Patch(t.Context(), &pods.Items[i], patch); client.IgnoreNotFound(err) != nil {
				t.Fatalf("setting the CPU of pod %s in %s: %v", pods.Items[i].Name, m.Name, err)
			}
		}
	}
}

// membersReplicas sums a Deployment's replicas over the members that have
// it.
func membersReplicas(ctx context.Context, key client.ObjectKey) (int32, error) {
	var sum int32
	for _, m := range fed.Members {
		var d appsv1.Deployment
		if err := m.Client.Get(ctx, key, &d); err != nil {
			if apierrors.IsNotFound(err) {
				// A member given no replicas has no copy.
				continue
			}
			return 0, err
		}
		sum += *d.Spec.Replicas
	}
	return sum, nil
}

// TestFederatedHPAScalesWithCPU: a Deployment divided over the three
// members, 3 pods requesting 100m each, and a FederatedHPA keeping their
// CPU at 50% of the request, between 3 and 9 replicas. When the simulated
// CPU of its pods rises to 200m, the FederatedHPA scales the template to 9
// and the members run 9 between them; when it falls to 10m, the template
// goes back to 3 once the 20-second scale-down window has passed.
func TestFederatedHPAScalesWithCPU(t *testing.T) {
	t.Parallel()
	needsPodMetrics(t)
	ns := namespace(t, "e2e-fhpa")
	create(t, evenlyDivided(propagationPolicy(ns, "web", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})))
	d := requesting(ns, "web", 3, "100m")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	eventually(t, "3 pods running in the members", func(ctx context.Context) (bool, error) {
		running := 0
		for _, m := range fed.Members {
			var pods corev1.PodList
			if err := m.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
				return false, err
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
		}
		return running == 3, nil
	})
	setPodCPU(t, ns, "web", "10m")

	fhpa := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](3),
			MaxReplicas:    9,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](20)},
			},
		},
	}
	create(t, fhpa)
	eventually(t, "the FederatedHPA reading the pods' CPU", func(ctx context.Context) (bool, error) {
		var got autoscalingv1alpha1.FederatedHPA
		if err := cp.Get(ctx, client.ObjectKeyFromObject(fhpa), &got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})

	setPodCPU(t, ns, "web", "200m")
	eventually(t, "the template scaled to 9", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		err := cp.Get(ctx, key, &got)
		return err == nil && *got.Spec.Replicas == 9, err
	})
	eventually(t, "9 replicas divided among the members", func(ctx context.Context) (bool, error) {
		n, err := membersReplicas(ctx, key)
		return n == 9, err
	})

	setPodCPU(t, ns, "web", "10m")
	eventually(t, "the template back to 3 after the scale-down window", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		err := cp.Get(ctx, key, &got)
		return err == nil && *got.Spec.Replicas == 3, err
	})
	eventually(t, "3 replicas in the members", func(ctx context.Context) (bool, error) {
		n, err := membersReplicas(ctx, key)
		return n == 3, err
	})
	eventually(t, "the status at 3 replicas", func(ctx context.Context) (bool, error) {
		var got autoscalingv1alpha1.FederatedHPA
		err := cp.Get(ctx, client.ObjectKeyFromObject(fhpa), &got)
		return err == nil && got.Status.LastScaleTime != nil && got.Status.CurrentReplicas == 3 && got.Status.DesiredReplicas == 3, err
	})
}

// TestFederatedHPAEnforcesMinReplicas: a FederatedHPA whose minReplicas is
// above the template's count scales the template up to it, whatever the
// metrics say, through the template's scale subresource; the scheduler
// divides the new count among the members.
func TestFederatedHPAEnforcesMinReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-fhpa-min")
	create(t, evenlyDivided(propagationPolicy(ns, "api", nil, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"})))
	d := requesting(ns, "api", 1, "100m")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	eventually(t, "api in the members", func(ctx context.Context) (bool, error) {
		n, err := membersReplicas(ctx, key)
		return n == 1, err
	})
	fhpa := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
			MinReplicas:    ptr.To[int32](4),
			MaxReplicas:    6,
		},
	}
	create(t, fhpa)
	eventually(t, "the template scaled to minReplicas", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		err := cp.Get(ctx, key, &got)
		return err == nil && *got.Spec.Replicas == 4, err
	})
	eventually(t, "4 replicas divided among the members", func(ctx context.Context) (bool, error) {
		n, err := membersReplicas(ctx, key)
		return n == 4, err
	})
	eventually(t, "the rescale in the FederatedHPA's status", func(ctx context.Context) (bool, error) {
		var got autoscalingv1alpha1.FederatedHPA
		if err := cp.Get(ctx, client.ObjectKeyFromObject(fhpa), &got); err != nil {
			return false, err
		}
		return got.Status.LastScaleTime != nil && got.Status.DesiredReplicas == 4, nil
	})
}
