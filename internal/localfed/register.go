package localfed

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/internal/join"
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

// joinOptions registers the member as `karmadactl join` does, with
// bounded tokens: a benchmark's members without a token controller still
// get theirs.
func joinOptions(member *Cluster) join.Options {
	return join.Options{
		ClusterName:      member.Name,
		ClusterNamespace: NamespaceCluster,
		APIEndpoint:      member.Endpoint,
		CAData:           member.CAData,
		TokenLifetime:    memberTokenSeconds * time.Second,
	}
}

// grantControlPlaneAccess creates, in the member, the ServiceAccounts the
// control plane acts as (internal/join) and keeps the full-access one's
// token.
func grantControlPlaneAccess(ctx context.Context, member *Cluster) error {
	creds, err := join.GrantAccess(ctx, member.Client, joinOptions(member))
	if err != nil {
		return fmt.Errorf("granting the control plane access to %s: %w", member.Name, err)
	}
	member.token, member.impersonatorToken = creds.Token, creds.ImpersonatorToken
	return nil
}

// registerMember creates the member's Secrets and its Push-mode Cluster in
// the control plane.
func registerMember(ctx context.Context, controlPlane, member *Cluster) error {
	id, err := join.MemberID(ctx, member.Client)
	if err != nil {
		return err
	}
	creds := join.Credentials{Token: member.token, ImpersonatorToken: member.impersonatorToken}
	if _, err := join.Register(ctx, controlPlane.Client, id, creds, joinOptions(member)); err != nil {
		return fmt.Errorf("registering %s: %w", member.Name, err)
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
