package localfed

import (
	"context"
	"fmt"

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
)

const (
	// NamespaceCluster holds the credentials of pushed members in the control
	// plane; in a member it holds the ServiceAccount those credentials are for.
	NamespaceCluster = "karmada-cluster"
	// NamespaceSystem is where the control plane's own components run.
	NamespaceSystem = "karmada-system"

	// memberTokenSeconds is a year: tokens are not refreshed, and a
	// `flotillactl local up` may be left running for long.
	memberTokenSeconds = 365 * 24 * 60 * 60
)

// grantControlPlaneAccess creates, in the member, a ServiceAccount bound to
// cluster-admin and a token for it, as `karmadactl join` does; the control
// plane reaches the member with that token only.
func grantControlPlaneAccess(ctx context.Context, member *Cluster) error {
	if err := createNamespaces(ctx, member, NamespaceCluster); err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceCluster, Name: member.Name}}
	objs := []client.Object{
		sa,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager:" + member.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{
				Kind: rbacv1.ServiceAccountKind, Namespace: NamespaceCluster, Name: member.Name,
			}},
		},
	}
	for _, obj := range objs {
		if err := member.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s in %s: %w", obj, obj.GetName(), member.Name, err)
		}
	}
	req := &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](memberTokenSeconds)},
	}
	if err := member.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return fmt.Errorf("requesting a token for %s/%s in %s: %w", sa.Namespace, sa.Name, member.Name, err)
	}
	member.token = req.Status.Token
	return nil
}

// registerMember creates the member's Secret and its Push-mode Cluster in the
// control plane, as `karmadactl join` does.
func registerMember(ctx context.Context, controlPlane, member *Cluster) error {
	var kubeSystem corev1.Namespace
	if err := member.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		return fmt.Errorf("reading kube-system of %s: %w", member.Name, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceCluster, Name: member.Name},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte(member.token),
			clusterv1alpha1.SecretCADataKey: member.CAData,
		},
	}
	if err := controlPlane.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: member.Name},
		Spec: clusterv1alpha1.ClusterSpec{
			// Karmada identifies a member by its kube-system namespace's UID.
			ID:          string(kubeSystem.UID),
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: member.Endpoint,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: NamespaceCluster, Name: member.Name},
		},
	}
	if err := controlPlane.Client.Create(ctx, cluster); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Cluster %s: %w", member.Name, err)
	}
	return nil
}

// createNamespaces creates namespaces that may already exist.
func createNamespaces(ctx context.Context, c *Cluster, names ...string) error {
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s in %s: %w", name, c.Name, err)
		}
	}
	return nil
}

// controlPlaneAuthorized reports whether the control plane's credentials for
// the member are honoured: a restarted API server answers /readyz before
// its authorizer has loaded the role bindings, and until then it forbids
// what the control plane asks.
func controlPlaneAuthorized(member *Cluster) (func(context.Context) (bool, error), error) {
	cfg := &rest.Config{Host: member.Endpoint, BearerToken: member.token, TLSClientConfig: rest.TLSClientConfig{CAData: member.CAData}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the control plane's client of %s: %w", member.Name, err)
	}
	return func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return false, err
		}
		return err == nil, err
	}, nil
}
