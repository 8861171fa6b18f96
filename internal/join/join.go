// Package join registers a member cluster in Push mode and removes it, as
// `karmadactl join` and `unjoin` do: in the member, a ServiceAccount with
// full access and one for impersonation, whose tokens the control plane
// keeps; in the control plane, their Secrets and the Cluster. The
// impersonator gets its rights from the control plane's unified-auth
// controller (the ClusterRole karmada-impersonator, through a Work), which
// lets it impersonate only those allowed clusters/proxy on the member.
// flotillactl join/unjoin, the agent and the local federation share it.
package join

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// DefaultClusterNamespace holds the members' credentials in the control
// plane, and the ServiceAccounts they are for in each member.
const DefaultClusterNamespace = "karmada-cluster"

// Names, as karmadactl gives them.
func serviceAccountName(cluster string) string { return "karmada-" + cluster }
func roleName(serviceAccount string) string    { return "karmada-controller-manager:" + serviceAccount }

// ImpersonatorSecretName is the control-plane Secret of cluster's
// impersonation token.
func ImpersonatorSecretName(cluster string) string { return cluster + "-impersonator" }

const impersonatorServiceAccount = "karmada-impersonator"

// labels mark what join created, as Karmada's objects.
func labels() map[string]string {
	return map[string]string{workv1alpha1.KarmadaSystemLabel: workv1alpha1.KarmadaSystemLabelValue}
}

// Options describe the member being joined.
type Options struct {
	// ClusterName is the Cluster's name.
	ClusterName string
	// ClusterNamespace holds the credentials; default karmada-cluster.
	ClusterNamespace string
	// APIEndpoint is where the control plane reaches the member.
	APIEndpoint string
	// CAData verifies the member's serving certificate; with
	// InsecureSkipTLSVerification it is not verified.
	CAData                      []byte
	InsecureSkipTLSVerification bool
	// ProxyURL is the proxy the control plane goes through, if any.
	ProxyURL         string
	Provider, Region string
	Zones            []string
	// TokenLifetime, when set, has the member's API server issue bounded
	// tokens of that lifetime (TokenRequest) instead of the long-lived
	// ServiceAccount token Secrets karmadactl creates, which need the
	// member's token controller.
	TokenLifetime time.Duration
	// Timeout bounds the wait for token Secrets to be filled; default 1m.
	Timeout time.Duration
}

func (o *Options) defaults() error {
	if errs := validation.IsDNS1123Subdomain(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %v", o.ClusterName, errs)
	}
	if len(o.ClusterName) > 48 {
		// Karmada's limit: the execution namespace karmada-es-<name> must
		// be a valid namespace name.
		return fmt.Errorf("cluster name %q: longer than 48 characters", o.ClusterName)
	}
	if o.APIEndpoint == "" {
		return errors.New("the member's API endpoint is required")
	}
	if o.ClusterNamespace == "" {
		o.ClusterNamespace = DefaultClusterNamespace
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	return nil
}

// Credentials are the tokens the member issued for the control plane.
type Credentials struct {
	// Token authenticates as the member's full-access ServiceAccount.
	Token string
	// CAData is the member's CA as its token Secret holds it (empty with
	// Options.TokenLifetime).
	CAData []byte
	// ImpersonatorToken authenticates as the ServiceAccount that
	// impersonates users for the requests proxied on their behalf.
	ImpersonatorToken string
}

// Secrets says which of the member's credentials the control plane keeps,
// by the names of karmada-agent's --report-secrets: the full-access token
// (KubeCredentials, spec.secretRef) and the impersonation token
// (KubeImpersonator, spec.impersonatorSecretRef). Join reports both.
type Secrets struct {
	KubeCredentials  bool
	KubeImpersonator bool
}

// AllSecrets are both.
var AllSecrets = Secrets{KubeCredentials: true, KubeImpersonator: true}

// GrantAccess creates in the member the ServiceAccounts the control plane
// acts as, with their RBAC, and returns their tokens. It may run again:
// what exists is kept.
func GrantAccess(ctx context.Context, member client.Client, opts Options) (Credentials, error) {
	return GrantSecrets(ctx, member, opts, AllSecrets)
}

// GrantSecrets is GrantAccess for the credentials of which alone.
func GrantSecrets(ctx context.Context, member client.Client, opts Options, which Secrets) (Credentials, error) {
	if err := opts.defaults(); err != nil {
		return Credentials{}, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.ClusterNamespace, Labels: labels()}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: opts.ClusterNamespace, Name: serviceAccountName(opts.ClusterName), Labels: labels()}}
	impersonator := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: opts.ClusterNamespace, Name: impersonatorServiceAccount, Labels: labels()}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: roleName(sa.Name), Labels: labels()},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Labels: labels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	}
	objs := []client.Object{ns}
	if which.KubeCredentials {
		objs = append(objs, sa, role, binding)
	}
	if which.KubeImpersonator {
		// Only the ServiceAccount, as karmadactl join: what it may
		// impersonate is the unified-auth controller's ClusterRole
		// karmada-impersonator, which it propagates to the member.
		objs = append(objs, impersonator)
	}
	for _, obj := range objs {
		if err := member.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return Credentials{}, fmt.Errorf("creating %T %s in the member: %w", obj, obj.GetName(), err)
		}
	}
	var creds Credentials
	var err error
	if which.KubeCredentials {
		if creds.Token, creds.CAData, err = token(ctx, member, sa, opts); err != nil {
			return Credentials{}, err
		}
	}
	if which.KubeImpersonator {
		if creds.ImpersonatorToken, _, err = token(ctx, member, impersonator, opts); err != nil {
			return Credentials{}, err
		}
	}
	return creds, nil
}

// token returns a token of sa: a bounded one when asked for, else the
// long-lived one of a ServiceAccount token Secret named after it, once the
// member's token controller has filled it, with the CA it put beside it.
func token(ctx context.Context, member client.Client, sa *corev1.ServiceAccount, opts Options) (string, []byte, error) {
	if opts.TokenLifetime > 0 {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(opts.TokenLifetime.Seconds()))}}
		if err := member.SubResource("token").Create(ctx, sa, req); err != nil {
			return "", nil, fmt.Errorf("requesting a token for %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		return req.Status.Token, nil, nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name, Labels: labels(),
			Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if err := member.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", nil, fmt.Errorf("creating the token Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	var tok string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, opts.Timeout, true, func(ctx context.Context) (bool, error) {
		if err := member.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		tok = string(secret.Data[corev1.ServiceAccountTokenKey])
		return tok != "", nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("waiting for the member's token controller to fill Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return tok, secret.Data[corev1.ServiceAccountRootCAKey], nil
}

// Register writes the credentials' Secrets and the Push Cluster into the
// control plane; memberID is the UID of the member's kube-system
// namespace, Karmada's cluster ID. A Cluster of that name already
// registered for another member is refused.
func Register(ctx context.Context, controlPlane client.Client, memberID string, creds Credentials, opts Options) (*clusterv1alpha1.Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	var clusters clusterv1alpha1.ClusterList
	if err := controlPlane.List(ctx, &clusters); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	for _, c := range clusters.Items {
		if c.Spec.ID == memberID && c.Name != opts.ClusterName {
			return nil, fmt.Errorf("the same cluster has been registered with name %s", c.Name)
		}
		// Checked before the Secrets are written: they would replace the
		// other member's credentials.
		if c.Name == opts.ClusterName && c.Spec.ID != memberID {
			return nil, fmt.Errorf("cluster %s already exists with a different ID", opts.ClusterName)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.ClusterNamespace, Labels: labels()}}
	if err := controlPlane.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	secretRef, impersonatorRef, err := WriteSecrets(ctx, controlPlane, creds, opts, AllSecrets)
	if err != nil {
		return nil, err
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: opts.ClusterName},
		Spec: clusterv1alpha1.ClusterSpec{
			ID:                          memberID,
			SyncMode:                    clusterv1alpha1.Push,
			APIEndpoint:                 opts.APIEndpoint,
			SecretRef:                   secretRef,
			ImpersonatorSecretRef:       impersonatorRef,
			InsecureSkipTLSVerification: opts.InsecureSkipTLSVerification,
			ProxyURL:                    opts.ProxyURL,
			Provider:                    opts.Provider,
			Region:                      opts.Region,
			Zones:                       opts.Zones,
		},
	}
	if err := controlPlane.Create(ctx, cluster); apierrors.IsAlreadyExists(err) {
		if err := controlPlane.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return nil, err
		}
		if cluster.Spec.ID != memberID {
			return nil, fmt.Errorf("cluster %s already exists with a different ID", opts.ClusterName)
		}
	} else if err != nil {
		return nil, fmt.Errorf("creating Cluster %s: %w", opts.ClusterName, err)
	}
	if err := OwnSecrets(ctx, controlPlane, cluster, secretRef, impersonatorRef); err != nil {
		return nil, err
	}
	return cluster, nil
}

// WriteSecrets writes into the control plane's opts.ClusterNamespace the
// Secrets of the credentials which names, Karmada's: <cluster> with the
// token and opts.CAData, <cluster>-impersonator with the impersonation
// token; an existing one gets the new tokens. It returns the references a
// Cluster holds to them (nil for those not written).
func WriteSecrets(ctx context.Context, controlPlane client.Client, creds Credentials, opts Options, which Secrets) (secretRef, impersonatorRef *clusterv1alpha1.LocalSecretReference, err error) {
	if err := opts.defaults(); err != nil {
		return nil, nil, err
	}
	if which.KubeCredentials {
		data := map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte(creds.Token), clusterv1alpha1.SecretCADataKey: opts.CAData}
		if secretRef, err = writeSecret(ctx, controlPlane, opts.ClusterNamespace, opts.ClusterName, data); err != nil {
			return nil, nil, err
		}
	}
	if which.KubeImpersonator {
		data := map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte(creds.ImpersonatorToken)}
		if impersonatorRef, err = writeSecret(ctx, controlPlane, opts.ClusterNamespace, ImpersonatorSecretName(opts.ClusterName), data); err != nil {
			return nil, nil, err
		}
	}
	return secretRef, impersonatorRef, nil
}

func writeSecret(ctx context.Context, c client.Client, namespace, name string, data map[string][]byte) (*clusterv1alpha1.LocalSecretReference, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	ref := &clusterv1alpha1.LocalSecretReference{Namespace: namespace, Name: name}
	err := c.Create(ctx, secret)
	if err == nil {
		return ref, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating Secret %s/%s: %w", namespace, name, err)
	}
	existing := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	if equality.Semantic.DeepEqual(existing.Data, data) {
		return ref, nil
	}
	base := existing.DeepCopy()
	existing.Data = data
	if err := c.Patch(ctx, existing, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("updating Secret %s/%s: %w", namespace, name, err)
	}
	return ref, nil
}

// OwnSecrets makes cluster the controller owner of the Secrets refs name
// (nil ones skipped), so they go with it, as Karmada's do.
func OwnSecrets(ctx context.Context, controlPlane client.Client, cluster *clusterv1alpha1.Cluster, refs ...*clusterv1alpha1.LocalSecretReference) error {
	owner := metav1.NewControllerRef(cluster, clusterv1alpha1.GroupVersion.WithKind("Cluster"))
	for _, ref := range refs {
		if ref == nil {
			continue
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
		patch := client.MergeFrom(s.DeepCopy())
		s.OwnerReferences = []metav1.OwnerReference{*owner}
		if err := controlPlane.Patch(ctx, s, patch); err != nil {
			return fmt.Errorf("owning Secret %s/%s by the Cluster: %w", ref.Namespace, ref.Name, err)
		}
	}
	return nil
}

// MemberID is the member's Karmada cluster ID: its kube-system namespace's
// UID.
func MemberID(ctx context.Context, member client.Client) (string, error) {
	var ns corev1.Namespace
	if err := member.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err != nil {
		return "", fmt.Errorf("reading the member's kube-system namespace: %w", err)
	}
	return string(ns.UID), nil
}

// Unjoin deletes the Cluster from the control plane and waits, up to
// timeout, until it is gone (its Works removed from the member first);
// then, when member is given, removes what GrantAccess created there.
func Unjoin(ctx context.Context, controlPlane, member client.Client, name, namespace string, timeout time.Duration) error {
	if namespace == "" {
		namespace = DefaultClusterNamespace
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := controlPlane.Delete(ctx, cluster); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Cluster %s: %w", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := controlPlane.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("waiting for Cluster %s to be deleted: %w", name, err)
	}
	if member == nil {
		return nil
	}
	sa := serviceAccountName(name)
	for _, obj := range []client.Object{
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName(sa)}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName(sa)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}},
		// One member is joined under one name, so its impersonator goes too.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: impersonatorServiceAccount}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: impersonatorServiceAccount}},
		// The Cluster's Works took its RBAC away with them; these are left
		// only by an earlier join, which made them itself, or when no
		// controller-manager ran to remove them.
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: impersonatorServiceAccount}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: impersonatorServiceAccount}},
	} {
		if err := member.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %T %s from the member: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}
