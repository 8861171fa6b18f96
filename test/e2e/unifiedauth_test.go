package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
)

// TestUnifiedAuth: a member's impersonator may impersonate only those the
// control plane lets proxy to that member. A service account gains
// clusters/proxy on member1: it reads member1 through the proxy within
// seconds, while member2's impersonator still may not impersonate it; it
// loses the right and member1's impersonator may not either.
func TestUnifiedAuth(t *testing.T) {
	ctx := t.Context()
	ns := namespace(t, "e2e-unified-auth")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator"}}
	if err := cp.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":" + sa.Name
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
	// In every member the user may list the namespace's ConfigMaps: what
	// stands between them and the member is the impersonation alone.
	for _, m := range fed.Members {
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator-view"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
		if err := m.Client.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
	}

	// impersonating lists the namespace's ConfigMaps in member as its
	// impersonator, impersonating the user.
	impersonating := func(ctx context.Context, name string) error {
		m := member(t, name)
		secret := &corev1.Secret{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: join.DefaultClusterNamespace, Name: join.ImpersonatorSecretName(name)}, secret); err != nil {
			return err
		}
		cfg := &rest.Config{Host: m.Endpoint, BearerToken: string(secret.Data[clusterv1alpha1.SecretTokenKey]),
			TLSClientConfig: rest.TLSClientConfig{CAData: m.CAData}, Impersonate: rest.ImpersonationConfig{UserName: user, Groups: groups}}
		// A clientset, not a client needing discovery first, so that the
		// member's refusal comes back as it is.
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err
	}
	refused := func(err error) bool {
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "impersonate")
	}

	// throughProxy GETs the namespace's ConfigMaps of member through the
	// control plane's proxy as the user.
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := cp.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatal(err)
	}
	asUser := &rest.Config{Host: fed.ControlPlane.Endpoint, BearerToken: req.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: fed.ControlPlane.CAData}}
	kube, err := kubernetes.NewForConfig(asUser)
	if err != nil {
		t.Fatal(err)
	}
	throughProxy := func(ctx context.Context, member string) (int, error) {
		var code int
		err := kube.Discovery().RESTClient().Get().
			AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters/" + member + "/proxy/api/v1/namespaces/" + ns + "/configmaps").
			Do(ctx).StatusCode(&code).Error()
		return code, err
	}

	for _, m := range []string{"member1", "member2"} {
		if err := impersonating(ctx, m); !refused(err) {
			t.Errorf("%s's impersonator impersonating a user without clusters/proxy: %v, want a refusal", m, err)
		}
	}

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-proxy-member1"}, Rules: []rbacv1.PolicyRule{{
		Verbs: []string{"get"}, APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}}}}
	grant := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-proxy-member1"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}}
	for _, obj := range []client.Object{role, grant} {
		if err := cp.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cp.Delete(context.Background(), obj) })
	}
	eventually(t, "the user reading member1 through the proxy", func(ctx context.Context) (bool, error) {
		code, err := throughProxy(ctx, "member1")
		if code != http.StatusOK {
			return false, fmt.Errorf("HTTP %d: %w", code, err)
		}
		return true, nil
	})
	if code, _ := throughProxy(ctx, "member2"); code != http.StatusForbidden {
		t.Errorf("member2 through the proxy: HTTP %d, want 403 (the control plane allows member1 only)", code)
	}
	if err := impersonating(ctx, "member2"); !refused(err) {
		t.Errorf("member2's impersonator impersonating a user allowed member1 only: %v, want a refusal", err)
	}

	if err := cp.Delete(ctx, grant); err != nil {
		t.Fatal(err)
	}
	eventually(t, "member1's impersonator refusing the user again", func(ctx context.Context) (bool, error) {
		switch err := impersonating(ctx, "member1"); {
		case err == nil:
			return false, errors.New("still impersonable")
		case refused(err):
			return true, nil
		default:
			return false, err
		}
	})
}
