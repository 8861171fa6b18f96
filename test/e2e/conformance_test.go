package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// coreEvent waits for a core/v1 Event, as a Karmada user's client watching
// events sees it, about the object of kind and name with reason, whose
// message passes msg (nil: any).
func coreEvent(t *testing.T, ns, kind, name, reason string, msg func(string) bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s event on %s %s", reason, kind, name), func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := cp.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if o.Kind == kind && o.Name == name && ev.Reason == reason && (msg == nil || msg(ev.Message)) {
				return true, nil
			}
		}
		return false, nil
	})
}

// TestKarmadaUsersSee walks issue 15's points a Karmada user meets on a
// federation: a ClusterPropagationPolicy naming a Deployment that existed
// before it, events on RBAC objects named system:..., WorkDispatching on
// the Works and AggregateStatusSucceed for a ClusterIP Service.
func TestKarmadaUsersSee(t *testing.T) {
	ns := namespace(t, "karmada-users-see")
	members := allMembers()

	t.Run("ClusterPropagationPolicy by name claims an existing Deployment", func(t *testing.T) {
		labels := map[string]string{"app": "by-name"}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-name"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
				},
			},
		}
		create(t, dep)
		cpp := &policyv1alpha1.ClusterPropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "karmada-users-see-by-name"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "by-name"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
			},
		}
		create(t, cpp)
		t.Cleanup(func() { _ = cp.Delete(context.Background(), cpp) })
		inMembers(t, members, client.ObjectKeyFromObject(dep), func() *appsv1.Deployment { return &appsv1.Deployment{} }, "Deployment by-name", func(*appsv1.Deployment) bool { return true })
		work := names.Work(ns, dep.Name, "Deployment")
		coreEvent(t, names.ExecutionSpace(members[0]), "Work", work, "WorkDispatching", func(m string) bool {
			return m == "Work is being dispatched to member clusters."
		})
	})

	t.Run("events about a ClusterRole named system:...", func(t *testing.T) {
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:karmada-users-see:role"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}
		create(t, role)
		t.Cleanup(func() { _ = cp.Delete(context.Background(), role) })
		cpp := &policyv1alpha1.ClusterPropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "karmada-users-see-role"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
			},
		}
		create(t, cpp)
		t.Cleanup(func() { _ = cp.Delete(context.Background(), cpp) })
		inMembers(t, members, client.ObjectKeyFromObject(role), func() *rbacv1.ClusterRole { return &rbacv1.ClusterRole{} }, "ClusterRole "+role.Name, func(*rbacv1.ClusterRole) bool { return true })
		coreEvent(t, metav1.NamespaceDefault, "ClusterRole", role.Name, "ApplyPolicySucceed", nil)
	})

	t.Run("AggregateStatusSucceed for a ClusterIP Service", func(t *testing.T) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "clusterip"},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "clusterip"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		}
		create(t, svc)
		create(t, propagationPolicy(ns, "clusterip", members, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Service", Name: svc.Name}))
		binding := names.Binding(svc.Name, "Service")
		want := fmt.Sprintf("Update ResourceBinding(%s/%s) with AggregatedStatus successfully.", ns, binding)
		coreEvent(t, ns, "ResourceBinding", binding, "AggregateStatusSucceed", func(m string) bool { return m == want })
		coreEvent(t, ns, "Service", svc.Name, "AggregateStatusSucceed", func(m string) bool { return m == want })
	})
}
