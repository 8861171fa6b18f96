package hpascaletargetmarker_test

import (
	"context"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

func hpa(ns, name, target string, propagated bool) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
		},
	}
	if propagated {
		h.Labels = map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id"}
	}
	return h
}

// retained reports whether Deployment name carries the retain-replicas label.
func retained(ctx context.Context, ns, name string) (bool, error) {
	d := &appsv1.Deployment{}
	if err := server.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return false, err
	}
	return d.Labels[workv1alpha1.RetainReplicasLabel] == workv1alpha1.RetainReplicasValue, nil
}

func TestMarker(t *testing.T) {
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&hpascaletargetmarker.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	ctx := t.Context()
	const ns = "default"
	for _, obj := range []client.Object{deployment(ns, "web"), deployment(ns, "api"), deployment(ns, "local"),
		hpa(ns, "web", "web", true), hpa(ns, "local", "local", false)} {
		if err := server.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.WaitFor(t, "the target of a propagated HPA is labelled", func(ctx context.Context) (bool, error) {
		return retained(ctx, ns, "web")
	})
	// A second propagated HPA of the same target.
	if err := server.Client.Create(ctx, hpa(ns, "probe", "web", true)); err != nil {
		t.Fatal(err)
	}
	// An HPA that no policy claims scales nothing in the members.
	if ok, err := retained(ctx, ns, "local"); err != nil || ok {
		t.Fatalf("the target of an HPA no policy claims is labelled: %v, %v", ok, err)
	}

	// The HPA moves to another target: the old one keeps its label while
	// the probe HPA still scales it, the new one gets it.
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := server.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, h); err != nil {
		t.Fatal(err)
	}
	h.Spec.ScaleTargetRef.Name = "api"
	if err := server.Client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the new target is labelled", func(ctx context.Context) (bool, error) {
		return retained(ctx, ns, "api")
	})
	if ok, err := retained(ctx, ns, "web"); err != nil || !ok {
		t.Fatalf("web lost its label while the probe HPA still scales it: %v, %v", ok, err)
	}
	// The last HPA of a target goes: so does its label.
	if err := server.Client.Delete(ctx, hpa(ns, "probe", "web", true)); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "web is unlabelled once no HPA scales it", func(ctx context.Context) (bool, error) {
		ok, err := retained(ctx, ns, "web")
		return !ok, err
	})
	if err := server.Client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "api is unlabelled once its HPA is deleted", func(ctx context.Context) (bool, error) {
		ok, err := retained(ctx, ns, "api")
		return !ok, err
	})
}
