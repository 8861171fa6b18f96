package bootstrap

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/agentaccess"
)

// clusterInfoKey is the key of cluster-info's kubeconfig.
const clusterInfoKey = "kubeconfig"

// CAHash is the pin of a CA certificate (PEM): "sha256:" and the hex SHA-256
// of its public key (SubjectPublicKeyInfo), kubeadm's format. It hashes the
// first certificate of the bundle.
func CAHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("CA bundle has no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing CA certificate: %w", err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// EnsureClusterInfo publishes, in kube-public/cluster-info, the control
// plane's endpoint and CA for registering members.
func EnsureClusterInfo(ctx context.Context, c client.Client, endpoint string, caPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: endpoint, CertificateAuthorityData: caPEM}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encoding cluster-info: %w", err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: agentaccess.ClusterInfoName},
		Data:       map[string]string{clusterInfoKey: string(raw)},
	}
	if err := c.Create(ctx, cm); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating cluster-info: %w", err)
		}
		if err := c.Update(ctx, cm); err != nil {
			return fmt.Errorf("updating cluster-info: %w", err)
		}
	}
	return nil
}

// Discover reads cluster-info from the control plane at endpoint, with the
// token and without trusting its serving certificate yet, and returns a
// connection that trusts the CA published there, once that CA's hash is one
// of caHashes. The connection authenticates with the token.
func Discover(ctx context.Context, endpoint string, token Token, caHashes []string) (*rest.Config, error) {
	if len(caHashes) == 0 {
		return nil, errors.New("--discovery-token-ca-cert-hash is required: it is how the member knows it talks to the right control plane")
	}
	for _, h := range caHashes {
		if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
			return nil, fmt.Errorf("--discovery-token-ca-cert-hash %q is not sha256:<64 hex digits>", h)
		}
	}
	untrusted := &rest.Config{Host: endpoint, BearerToken: token.String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(untrusted)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	cm, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, agentaccess.ClusterInfoName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading kube-public/%s from %s with the token: %w", agentaccess.ClusterInfoName, endpoint, err)
	}
	cfg, err := clientcmd.Load([]byte(cm.Data[clusterInfoKey]))
	if err != nil {
		return nil, fmt.Errorf("parsing cluster-info: %w", err)
	}
	var ca []byte
	for _, c := range cfg.Clusters {
		ca = c.CertificateAuthorityData
	}
	got, err := CAHash(ca)
	if err != nil {
		return nil, fmt.Errorf("cluster-info: %w", err)
	}
	found := false
	for _, h := range caHashes {
		found = found || strings.EqualFold(h, got)
	}
	if !found {
		return nil, fmt.Errorf("the control plane at %s has CA %s, which is not a --discovery-token-ca-cert-hash given; refusing to trust it", endpoint, got)
	}
	// From here on the CA is pinned: the same endpoint, verified.
	return &rest.Config{Host: endpoint, BearerToken: token.String(), TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, nil
}
