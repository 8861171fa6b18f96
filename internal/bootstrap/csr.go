package bootstrap

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/agentaccess"
)

// Certificate is a client certificate and its key, PEM.
type Certificate struct {
	CertPEM, KeyPEM []byte
}

// RequestAgentCertificate asks the control plane, through cs (a bootstrap
// token, or the agent's current certificate), for a client certificate of
// cluster's agent valid for expiration (0: the signer's default; the API
// server's floor is 10 minutes), and waits until it is issued or timeout
// passes.
func RequestAgentCertificate(ctx context.Context, cs kubernetes.Interface, cluster string, expiration, timeout time.Duration) (Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certificate{}, fmt.Errorf("generating the agent's key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: agentaccess.User(cluster), Organization: []string{agentaccess.Group}},
	}, key)
	if err != nil {
		return Certificate{}, fmt.Errorf("creating the certificate request: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Certificate{}, fmt.Errorf("encoding the agent's key: %w", err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "agent-csr-" + cluster + "-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: agentaccess.SignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}
	if expiration > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(expiration.Seconds()))
	}
	created, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return Certificate{}, fmt.Errorf("creating the agent's CSR: %w", err)
	}
	var issued []byte
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
				return false, fmt.Errorf("CSR %s %s: %s: %s", created.Name, c.Type, c.Reason, c.Message)
			}
		}
		issued = got.Status.Certificate
		return len(issued) > 0, nil
	})
	if err != nil {
		return Certificate{}, fmt.Errorf("waiting for the agent's certificate (CSR %s; is the controller-manager running?): %w", created.Name, err)
	}
	return Certificate{CertPEM: issued, KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}, nil
}
