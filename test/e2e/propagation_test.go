package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// TestSampleDividedDeployment applies config/samples/nginx.yaml — what
// `make run` shows a new user — and follows it to the members: 6 replicas
// divided 2:1 over member1 and member2, member2's image from the mirror
// registry, nothing in member3, and the template's readyReplicas summed.
func TestSampleDividedDeployment(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-sample")
	applyFile(t, "../../config/samples/nginx.yaml", ns)

	want := map[string]struct {
		replicas int32
		image    string
	}{
		"member1": {4, "docker.io/library/nginx:1.27"},
		"member2": {2, "mirror.example.internal/library/nginx:1.27"},
	}
	for name, w := range want {
		m := member(t, name)
		eventually(t, "nginx in "+name+" with the scheduled replicas, Available", func(ctx context.Context) (bool, error) {
			var d appsv1.Deployment
			if err := m.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != w.image {
				t.Fatalf("%s: image %q, want %q", name, got, w.image)
			}
			return d.Spec.Replicas != nil && *d.Spec.Replicas == w.replicas && d.Status.AvailableReplicas == w.replicas, nil
		})
	}
	eventually(t, "the template's status summed over members", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := cp.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &d); err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == 6 && d.Status.AvailableReplicas == 6, nil
	})
	err := member(t, "member3").Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "nginx"}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("member3 has nginx (err %v); the policy names member1 and member2 only", err)
	}
}

// TestDuplicatedConfigMapLifecycle propagates a ConfigMap to every member
// and follows an update and the delete.
func TestDuplicatedConfigMapLifecycle(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-configmap")
	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}},
		},
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"mode": "blue"}}
	create(t, cm)

	inEveryMember := func(what string, ok func(*corev1.ConfigMap, error) (bool, error)) {
		t.Helper()
		for _, m := range fed.Members {
			eventually(t, what+" in "+m.Name, func(ctx context.Context) (bool, error) {
				var got corev1.ConfigMap
				return ok(&got, m.Client.Get(ctx, client.ObjectKeyFromObject(cm), &got))
			})
		}
	}
	hasMode := func(mode string) func(*corev1.ConfigMap, error) (bool, error) {
		return func(got *corev1.ConfigMap, err error) (bool, error) {
			if err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return got.Data["mode"] == mode, nil
		}
	}
	inEveryMember("settings", hasMode("blue"))

	// The detector labels the template when it claims it: update what is
	// there now, as a user's kubectl apply would.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cp.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		cm.Data["mode"] = "green"
		return cp.Update(t.Context(), cm)
	})
	if err != nil {
		t.Fatal(err)
	}
	inEveryMember("the update", hasMode("green"))

	if err := cp.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	inEveryMember("the delete", func(_ *corev1.ConfigMap, err error) (bool, error) {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestClusterRoleThroughClusterPropagationPolicy propagates a cluster-scoped
// object, whose name has a colon, to two members.
func TestClusterRoleThroughClusterPropagationPolicy(t *testing.T) {
	t.Parallel()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e:reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}
	create(t, &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-reader"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}},
			},
		},
	})
	create(t, role)
	for _, name := range []string{"member1", "member3"} {
		m := member(t, name)
		eventually(t, "the ClusterRole in "+name, func(ctx context.Context) (bool, error) {
			var got rbacv1.ClusterRole
			if err := m.Client.Get(ctx, client.ObjectKeyFromObject(role), &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return len(got.Rules) == 1, nil
		})
	}
	err := member(t, "member2").Client.Get(t.Context(), client.ObjectKeyFromObject(role), &rbacv1.ClusterRole{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("member2 has the ClusterRole (err %v)", err)
	}
}
