package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// TestDependencies propagates a Deployment with propagateDeps: the
// ConfigMap and the Secret its pods mount and the ServiceAccount they run
// as follow it to member1 and member2, not member3; a new placement moves
// them with it; deleting the Deployment removes them from the members.
func TestDependencies(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-deps")
	labels := map[string]string{"app": "app"}
	deps := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config"}, Data: map[string]string{"mode": "blue"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-secret"}, StringData: map[string]string{"token": "t"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-sa"}},
	}
	for _, o := range deps {
		create(t, o)
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "app-sa",
					Containers:         []corev1.Container{{Name: "main", Image: "nginx"}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"},
						}}},
						{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-secret"}}},
					},
				},
			},
		},
	}
	create(t, d)
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "app"}},
			PropagateDeps:     true,
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
				ClusterNames: []string{"member1", "member2"},
			}},
		},
	}
	create(t, policy)

	everything := append([]client.Object{d}, deps...)
	depsPresent(t, []string{"member1", "member2"}, everything)
	// Present in member1 and member2 shows the controllers acted on the
	// placement; member3 was never part of it.
	depsAbsent(t, "member3", everything)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cp.Get(t.Context(), client.ObjectKeyFromObject(policy), policy); err != nil {
			return err
		}
		policy.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member3"}
		return cp.Update(t.Context(), policy)
	})
	if err != nil {
		t.Fatalf("moving the policy to member3: %v", err)
	}
	depsPresent(t, []string{"member3"}, everything)
	depsGone(t, []string{"member1", "member2"}, everything)

	if err := cp.Delete(t.Context(), d); err != nil {
		t.Fatalf("deleting the Deployment: %v", err)
	}
	depsGone(t, []string{"member3"}, everything)
}

// depsPresent waits until each object exists, under its control-plane
// namespace and name, in each of the named members.
func depsPresent(t *testing.T, members []string, objs []client.Object) {
	t.Helper()
	for _, name := range members {
		m := member(t, name)
		for _, o := range objs {
			eventually(t, kindName(o)+" in "+name, func(ctx context.Context) (bool, error) {
				err := m.Client.Get(ctx, client.ObjectKeyFromObject(o), emptyLike(o))
				return err == nil, client.IgnoreNotFound(err)
			})
		}
	}
}

// depsGone waits until no named member has any of the objects.
func depsGone(t *testing.T, members []string, objs []client.Object) {
	t.Helper()
	for _, name := range members {
		m := member(t, name)
		for _, o := range objs {
			eventually(t, kindName(o)+" gone from "+name, func(ctx context.Context) (bool, error) {
				err := m.Client.Get(ctx, client.ObjectKeyFromObject(o), emptyLike(o))
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
		}
	}
}

// depsAbsent fails t if the member has one of the objects now.
func depsAbsent(t *testing.T, memberName string, objs []client.Object) {
	t.Helper()
	m := member(t, memberName)
	for _, o := range objs {
		if err := m.Client.Get(t.Context(), client.ObjectKeyFromObject(o), emptyLike(o)); !apierrors.IsNotFound(err) {
			t.Errorf("%s in %s: want not found, got err %v", kindName(o), memberName, err)
		}
	}
}

func emptyLike(o client.Object) client.Object {
	switch o.(type) {
	case *appsv1.Deployment:
		return &appsv1.Deployment{}
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{}
	case *corev1.Secret:
		return &corev1.Secret{}
	case *corev1.ServiceAccount:
		return &corev1.ServiceAccount{}
	}
	panic("unexpected kind")
}

func kindName(o client.Object) string {
	switch o.(type) {
	case *appsv1.Deployment:
		return "Deployment " + o.GetName()
	case *corev1.ConfigMap:
		return "ConfigMap " + o.GetName()
	case *corev1.Secret:
		return "Secret " + o.GetName()
	case *corev1.ServiceAccount:
		return "ServiceAccount " + o.GetName()
	}
	return o.GetName()
}
