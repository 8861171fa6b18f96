package deploymentreplicassyncer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/names"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m, &server, nil)) }

// status is the reflected Deployment status of one member.
func status(t testing.TB, replicas int32) *runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"replicas": replicas})
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}

// settled is a binding placed 2+1 whose members report 4 and 2 replicas
// (their HPAs scaled up), with a template whose status says 6.
func settled(t testing.TB) (*appsv1.Deployment, *workv1alpha2.ResourceBinding) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}, Status: appsv1.DeploymentStatus{Replicas: 6}}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec: workv1alpha2.ResourceBindingSpec{
			Replicas: 3,
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
		},
		Status: workv1alpha2.ResourceBindingStatus{
			SchedulerObservedGeneration: 2,
			AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
				{ClusterName: "member1", Status: status(t, 4)}, {ClusterName: "member2", Status: status(t, 2)},
			},
		},
	}
	return d, rb
}

func TestSettled(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*appsv1.Deployment, *workv1alpha2.ResourceBinding)
		settled bool
	}{
		{name: "settled", mutate: func(*appsv1.Deployment, *workv1alpha2.ResourceBinding) {}, settled: true},
		{name: "binding behind the template", mutate: func(d *appsv1.Deployment, _ *workv1alpha2.ResourceBinding) { d.Spec.Replicas = ptr.To[int32](4) }},
		{name: "not scheduled yet", mutate: func(_ *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) { rb.Generation = 3 }},
		{name: "a member missing", mutate: func(_ *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus = rb.Status.AggregatedStatus[:1]
		}},
		{name: "a member without status", mutate: func(_ *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[1].Status = nil
		}},
		{name: "a member with no replicas yet", mutate: func(_ *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) {
			rb.Status.AggregatedStatus[1].Status = status(t, 0)
		}},
		{name: "template status not summed yet", mutate: func(d *appsv1.Deployment, _ *workv1alpha2.ResourceBinding) { d.Status.Replicas = 3 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, rb := settled(t)
			tc.mutate(d, rb)
			why := deploymentreplicassyncer.Settled(d, rb)
			if (why == "") != tc.settled {
				t.Errorf("Settled = %q, want settled %v", why, tc.settled)
			}
		})
	}
}

func TestSync(t *testing.T) {
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&deploymentreplicassyncer.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	ctx := t.Context()
	for i, scheduling := range []policyv1alpha1.ReplicaSchedulingType{policyv1alpha1.ReplicaSchedulingTypeDivided, policyv1alpha1.ReplicaSchedulingTypeDuplicated} {
		name := fmt.Sprintf("web%d", i)
		labels := map[string]string{"app": name}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{workv1alpha1.RetainReplicasLabel: "true"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
			},
		}
		_, want := settled(t)
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: names.Binding(name, "Deployment")},
			Spec:       want.Spec,
		}
		rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
		rb.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: scheduling}}
		if scheduling == policyv1alpha1.ReplicaSchedulingTypeDivided {
			rb.Spec.Placement.ReplicaScheduling.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceWeighted
		}
		for _, obj := range []client.Object{d, rb} {
			if err := server.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		rb.Status = want.Status
		rb.Status.SchedulerObservedGeneration = rb.Generation
		if err := server.Client.Status().Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
		// The binding-status controller sums the members into the template.
		d.Status.Replicas = 6
		if err := server.Client.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.WaitFor(t, "the Divided template takes the members' 6 replicas", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		err := server.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web0"}, d)
		return err == nil && *d.Spec.Replicas == 6, err
	})
	d := &appsv1.Deployment{}
	if err := server.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web1"}, d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 {
		t.Errorf("a Duplicated template's replicas changed to %d", *d.Spec.Replicas)
	}
}
