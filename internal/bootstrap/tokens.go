// Package bootstrap registers Pull members with bootstrap tokens, as
// Karmada (and kubeadm) do: a token in the control plane
// (kube-system/bootstrap-token-<id>, group
// system:bootstrappers:karmada:default-cluster-token) lets a member read the
// control plane's address and CA from kube-public/cluster-info, which it
// trusts only if the CA's public key has the hash it was given
// (--discovery-token-ca-cert-hash sha256:<hex>), and ask for its agent's
// client certificate with a CSR, which the controller-manager's approver
// approves. The agent later asks for its next certificate the same way
// with its own.
package bootstrap

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/agentaccess"
)

// Keys and values of a bootstrap token Secret, as the API server reads them.
const (
	secretType         = corev1.SecretType("bootstrap.kubernetes.io/token")
	secretPrefix       = "bootstrap-token-"
	keyTokenID         = "token-id"
	keyTokenSecret     = "token-secret"
	keyExpiration      = "expiration"
	keyDescription     = "description"
	keyUsageAuth       = "usage-bootstrap-authentication"
	keyUsageSigning    = "usage-bootstrap-signing"
	keyExtraGroups     = "auth-extra-groups"
	tokenIDLength      = 6
	tokenSecretLength  = 16
	tokenAlphabet      = "abcdefghijklmnopqrstuvwxyz0123456789"
	DefaultTokenTTL    = 24 * time.Hour
	defaultDescription = "Registers a Pull member with the control plane (flotillactl token create)"
)

var tokenPattern = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// Token is a bootstrap token: "<id>.<secret>".
type Token struct {
	ID, Secret  string
	Expires     time.Time // zero: never
	Description string
}

// String is the token as a member passes it (--token).
func (t Token) String() string { return t.ID + "." + t.Secret }

// ParseToken reads "<id>.<secret>".
func ParseToken(s string) (Token, error) {
	m := tokenPattern.FindStringSubmatch(s)
	if m == nil {
		return Token{}, fmt.Errorf("--token %q is not a bootstrap token: want 6 and 16 lowercase letters or digits, joined by a dot", s)
	}
	return Token{ID: m[1], Secret: m[2]}, nil
}

func randomString(n int) (string, error) {
	var b strings.Builder
	max := big.NewInt(int64(len(tokenAlphabet)))
	for range n {
		i, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generating a token: %w", err)
		}
		b.WriteByte(tokenAlphabet[i.Int64()])
	}
	return b.String(), nil
}

// CreateToken stores a new token valid for ttl (0: never expires) in the
// control plane, with the RBAC its group needs.
func CreateToken(ctx context.Context, c client.Client, ttl time.Duration, description string) (Token, error) {
	if ttl < 0 {
		return Token{}, fmt.Errorf("--ttl must not be negative, got %s", ttl)
	}
	if err := agentaccess.EnsureBootstrap(ctx, c); err != nil {
		return Token{}, err
	}
	id, err := randomString(tokenIDLength)
	if err != nil {
		return Token{}, err
	}
	secret, err := randomString(tokenSecretLength)
	if err != nil {
		return Token{}, err
	}
	if description == "" {
		description = defaultDescription
	}
	t := Token{ID: id, Secret: secret, Description: description}
	data := map[string]string{
		keyTokenID: id, keyTokenSecret: secret, keyDescription: description,
		keyUsageAuth: "true", keyUsageSigning: "true", keyExtraGroups: agentaccess.BootstrapGroup,
	}
	if ttl > 0 {
		t.Expires = time.Now().Add(ttl).UTC().Truncate(time.Second)
		data[keyExpiration] = t.Expires.Format(time.RFC3339)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: secretPrefix + id},
		Type:       secretType,
		StringData: data,
	}
	if err := c.Create(ctx, s); err != nil {
		return Token{}, fmt.Errorf("storing bootstrap token %s: %w", id, err)
	}
	return t, nil
}

// ListTokens returns the registration tokens of the control plane (those of
// the registration group), by id.
func ListTokens(ctx context.Context, c client.Client) ([]Token, error) {
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		return nil, fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	var out []Token
	for _, s := range secrets.Items {
		if s.Type != secretType || !slices.Contains(strings.Split(string(s.Data[keyExtraGroups]), ","), agentaccess.BootstrapGroup) {
			continue
		}
		t := Token{ID: string(s.Data[keyTokenID]), Secret: string(s.Data[keyTokenSecret]), Description: string(s.Data[keyDescription])}
		if exp := string(s.Data[keyExpiration]); exp != "" {
			if at, err := time.Parse(time.RFC3339, exp); err == nil {
				t.Expires = at
			}
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Token) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteToken removes the token of id ("<id>" or a whole "<id>.<secret>").
func DeleteToken(ctx context.Context, c client.Client, id string) error {
	if t, err := ParseToken(id); err == nil {
		id = t.ID
	}
	if !regexp.MustCompile(`^[a-z0-9]{6}$`).MatchString(id) {
		return fmt.Errorf("token id %q is not 6 lowercase letters or digits", id)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: secretPrefix + id}}
	if err := c.Delete(ctx, s); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no bootstrap token with id %s", id)
		}
		return fmt.Errorf("deleting bootstrap token %s: %w", id, err)
	}
	return nil
}
