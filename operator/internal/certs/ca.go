package certs

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

const (
	// DefaultCAValidity is how long a CA this package creates is valid.
	DefaultCAValidity = 10 * 365 * 24 * time.Hour
	// DefaultLeafValidity is how long a leaf certificate is valid unless the
	// request says otherwise.
	DefaultLeafValidity = 365 * 24 * time.Hour

	// clockSkew is how far NotBefore is set before the moment of issuance.
	// The certificate is handed to processes on other hosts (etcd members,
	// the components' pods, users' laptops) whose clocks may be a little
	// behind the operator's; without the margin they would reject a freshly
	// rotated certificate as "not yet valid" until their clock caught up.
	clockSkew = 5 * time.Minute
)

// KeyPair is a certificate and its private key, both PEM.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// CAOptions describe a CA to create.
type CAOptions struct {
	CommonName    string
	Organizations []string
	// Validity defaults to DefaultCAValidity.
	Validity time.Duration
	// Algorithm defaults to ECDSAP256.
	Algorithm Algorithm
}

// CA signs certificates. It is either created here (NewCA) or loaded from
// PEM the operator stored earlier or the user supplied (LoadCA).
type CA struct {
	cert   *x509.Certificate
	signer crypto.Signer
	pair   KeyPair
	bundle []byte
}

// Certificate is the CA's parsed certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// KeyPair is the CA's certificate and key as created or loaded; a loaded key
// keeps the encoding it came in.
func (ca *CA) KeyPair() KeyPair { return ca.pair }

// BundlePEM is what clients of certificates from this CA should trust (the
// "ca.crt" of each Secret, a kubeconfig's certificate-authority-data, the
// API server's --client-ca-file): the CA's own certificate followed by the
// chain and bundle it was loaded with, if any.
func (ca *CA) BundlePEM() []byte { return ca.bundle }

// NewCA creates a self-signed CA.
func NewCA(opts CAOptions) (*CA, error) {
	if opts.CommonName == "" {
		return nil, errors.New("new CA: common name is empty")
	}
	if opts.Validity < 0 {
		return nil, fmt.Errorf("new CA %q: negative validity %s", opts.CommonName, opts.Validity)
	}
	key, err := opts.Algorithm.generateKey()
	if err != nil {
		return nil, fmt.Errorf("new CA %q: %w", opts.CommonName, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("new CA %q: %w", opts.CommonName, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	validity := opts.Validity
	if validity == 0 {
		validity = DefaultCAValidity
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: opts.CommonName, Organization: opts.Organizations},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		// These CAs sign leaves only; a path length of zero makes any
		// intermediate they were tricked into signing useless.
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("new CA %q: sign: %w", opts.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("new CA %q: parse what was signed: %w", opts.CommonName, err)
	}
	keyPEM, err := encodePKCS8(key)
	if err != nil {
		return nil, fmt.Errorf("new CA %q: %w", opts.CommonName, err)
	}
	certPEM := encodeCert(cert)
	return &CA{
		cert:   cert,
		signer: key,
		pair:   KeyPair{CertPEM: certPEM, KeyPEM: keyPEM},
		bundle: certPEM,
	}, nil
}

// LoadCA reads a CA from PEM. certPEM starts with the CA's certificate and
// may go on with the chain above it; keyPEM is its private key in PKCS#1,
// PKCS#8 or SEC1. bundlePEM is optional (a TLS Secret's "ca.crt"): the
// certificates the CA's own certificate chains to, added to BundlePEM.
//
// It does not look at the clock: whether the CA is still valid, or due for
// replacement, is Due's question.
func LoadCA(certPEM, keyPEM, bundlePEM []byte) (*CA, error) {
	certs, err := parseCertificates(certPEM)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert := certs[0]
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA", cert.Subject.CommonName)
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("CA certificate %q may not sign certificates: no keyCertSign key usage", cert.Subject.CommonName)
	}
	signer, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	if !publicKeysEqual(signer.Public(), cert.PublicKey) {
		return nil, fmt.Errorf("CA key does not belong to CA certificate %q", cert.Subject.CommonName)
	}

	bundle := certs
	if len(bytes.TrimSpace(bundlePEM)) > 0 {
		extra, err := parseCertificates(bundlePEM)
		if err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
		if err := chainsTo(cert, certs[1:], extra); err != nil {
			return nil, fmt.Errorf("CA certificate %q does not chain to the CA bundle: %w", cert.Subject.CommonName, err)
		}
		bundle = append(bundle, extra...)
	}
	return &CA{
		cert:   cert,
		signer: signer,
		pair:   KeyPair{CertPEM: certPEM, KeyPEM: keyPEM},
		bundle: encodeCert(dedupCerts(bundle)...),
	}, nil
}

// chainsTo verifies cert against roots. It verifies as of cert's NotBefore:
// the issuers were valid when they signed it, while "now" would make
// loading depend on the clock, which LoadCA promises not to.
func chainsTo(cert *x509.Certificate, intermediates, roots []*x509.Certificate) error {
	opts := x509.VerifyOptions{
		Roots:         x509.NewCertPool(),
		Intermediates: x509.NewCertPool(),
		CurrentTime:   cert.NotBefore,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	}
	for _, c := range roots {
		opts.Roots.AddCert(c)
	}
	for _, c := range intermediates {
		opts.Intermediates.AddCert(c)
	}
	_, err := cert.Verify(opts)
	return err
}

// Issue creates a key and a certificate for it signed by the CA. The
// returned certificate is the parsed form of KeyPair.CertPEM, for its
// NotBefore and NotAfter.
func (ca *CA) Issue(req Request) (KeyPair, *x509.Certificate, error) {
	if err := req.validate(); err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: %w", req.CommonName, err)
	}
	key, err := req.Algorithm.generateKey()
	if err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: %w", req.CommonName, err)
	}
	serial, err := newSerial()
	if err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: %w", req.CommonName, err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	keyUsage := x509.KeyUsageDigitalSignature
	if _, ok := key.(*rsa.PrivateKey); ok {
		// TLS 1.2 clients that still use RSA key exchange encrypt to the
		// server's key; the certificate must allow it or they refuse.
		keyUsage |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: req.CommonName, Organization: req.Organizations},
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPs,
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(req.validity()),
		KeyUsage:              keyUsage,
		ExtKeyUsage:           req.Usages.extKeyUsages(),
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.signer)
	if err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: sign: %w", req.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: parse what was signed: %w", req.CommonName, err)
	}
	keyPEM, err := encodePKCS8(key)
	if err != nil {
		return KeyPair{}, nil, fmt.Errorf("issue %q: %w", req.CommonName, err)
	}
	return KeyPair{CertPEM: encodeCert(cert), KeyPEM: keyPEM}, cert, nil
}

// newSerial is a random positive 128-bit serial number. Randomness, not a
// counter: nothing here remembers the last serial, and two CAs that share a
// subject (a CA regenerated after loss) must not repeat serials.
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	n, err := rand.Int(rand.Reader, limit.Sub(limit, big.NewInt(1)))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	// rand.Int yields [0, 2^128-1); shifting by one keeps zero out.
	return n.Add(n, big.NewInt(1)), nil
}

func encodeCert(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		// Writing to a bytes.Buffer does not fail.
		_ = pem.Encode(&b, &pem.Block{Type: certutil.CertificateBlockType, Bytes: c.Raw})
	}
	return b.Bytes()
}

func dedupCerts(certs []*x509.Certificate) []*x509.Certificate {
	var out []*x509.Certificate
	for _, c := range certs {
		seen := false
		for _, o := range out {
			if c.Equal(o) {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, c)
		}
	}
	return out
}

// parseCertificates reads every certificate in data.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty")
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("not a PEM certificate: %w", err)
	}
	return certs, nil
}

// parsePrivateKey reads the first private key in data.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty")
	}
	if isEncrypted(data) {
		return nil, errors.New("encrypted private keys are not supported")
	}
	key, err := keyutil.ParsePrivateKeyPEM(data)
	if err != nil {
		// keyutil says only that nothing matched; the useful part is which
		// encodings were tried.
		return nil, errors.New("not a PEM private key (PKCS#1, PKCS#8 or SEC1)")
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", key)
	}
	return signer, nil
}

// isEncrypted tells apart a key the user forgot to decrypt, which keyutil
// would only report as "not a key".
func isEncrypted(data []byte) bool {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return false
		}
		if block.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}
