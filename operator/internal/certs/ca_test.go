package certs

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewCA(t *testing.T) {
	tests := []struct {
		name         string
		opts         CAOptions
		wantAlg      Algorithm
		wantValidity time.Duration
	}{
		{
			name:         "defaults",
			opts:         CAOptions{CommonName: "flotilla-ca"},
			wantAlg:      ECDSAP256,
			wantValidity: DefaultCAValidity,
		},
		{
			name:         "RSA with organization and validity",
			opts:         CAOptions{CommonName: "flotilla-ca", Organizations: []string{"flotilla"}, Validity: 48 * time.Hour, Algorithm: RSA2048},
			wantAlg:      RSA2048,
			wantValidity: 48 * time.Hour,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().Truncate(time.Second)
			ca := mustNewCA(t, tt.opts)
			cert := parseCert(t, ca.KeyPair().CertPEM)
			if !cert.Equal(ca.Certificate()) {
				t.Error("KeyPair().CertPEM is not Certificate()")
			}
			if !bytes.Equal(ca.BundlePEM(), ca.KeyPair().CertPEM) {
				t.Error("BundlePEM of a new CA is not its certificate")
			}
			got := struct {
				CN             string
				O              []string
				IsCA, PathZero bool
				CertSign       bool
				Alg            Algorithm
				Lifetime       time.Duration
				SelfSigned     bool
			}{
				CN: cert.Subject.CommonName, O: cert.Subject.Organization,
				IsCA: cert.IsCA && cert.BasicConstraintsValid, PathZero: cert.MaxPathLenZero && cert.MaxPathLen == 0,
				CertSign:   cert.KeyUsage&x509.KeyUsageCertSign != 0,
				Alg:        algorithmOf(cert.PublicKey),
				Lifetime:   cert.NotAfter.Sub(cert.NotBefore),
				SelfSigned: cert.CheckSignatureFrom(cert) == nil,
			}
			want := got
			want.CN, want.O = tt.opts.CommonName, tt.opts.Organizations
			want.IsCA, want.PathZero, want.CertSign, want.SelfSigned = true, true, true, true
			want.Alg = tt.wantAlg
			want.Lifetime = tt.wantValidity + clockSkew
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CA certificate (-want +got):\n%s", diff)
			}
			if nb := cert.NotBefore; nb.Before(before.Add(-clockSkew)) || nb.After(time.Now().Add(-clockSkew)) {
				t.Errorf("NotBefore %s is not issuance time less %s", nb, clockSkew)
			}
			block, _ := pem.Decode(ca.KeyPair().KeyPEM)
			if block == nil || block.Type != "PRIVATE KEY" {
				t.Fatalf("key is not a PKCS#8 PEM block: %q", ca.KeyPair().KeyPEM)
			}
			// What NewCA wrote, LoadCA reads back.
			loaded, err := LoadCA(ca.KeyPair().CertPEM, ca.KeyPair().KeyPEM, nil)
			if err != nil {
				t.Fatalf("LoadCA of a new CA: %v", err)
			}
			if !loaded.Certificate().Equal(cert) {
				t.Error("LoadCA returned another certificate")
			}
		})
	}
}

func TestNewCARefuses(t *testing.T) {
	tests := []struct {
		name    string
		opts    CAOptions
		wantErr string
	}{
		{"no common name", CAOptions{}, "new CA: common name is empty"},
		{"negative validity", CAOptions{CommonName: "x", Validity: -time.Hour}, `new CA "x": negative validity -1h0m0s`},
		{"unknown algorithm", CAOptions{CommonName: "x", Algorithm: "DSA"}, `new CA "x": unknown key algorithm "DSA" (want ECDSA-P256, RSA-2048, RSA-3072 or RSA-4096)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCA(tt.opts)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("NewCA() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLoadCAKeyEncodings loads a user's CA with its key in every encoding
// such keys come in, and signs with it.
func TestLoadCAKeyEncodings(t *testing.T) {
	ecKey := newECDSAKey(t)
	rsaKey := newRSAKey(t)
	ecCert := signCert(t, certTemplate("user-ec-ca", nil), ecKey, nil, nil)
	rsaCert := signCert(t, certTemplate("user-rsa-ca", nil), rsaKey, nil, nil)
	// openssl ecparam -genkey writes the curve's parameters before the key.
	ecParams := pemBlock("EC PARAMETERS", []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07})

	tests := []struct {
		name    string
		cert    []byte
		key     []byte
		wantAlg Algorithm
	}{
		{"ECDSA PKCS#8", ecCert, pkcs8PEM(t, ecKey), ECDSAP256},
		{"ECDSA SEC1", ecCert, sec1PEM(t, ecKey), ECDSAP256},
		{"ECDSA SEC1 after EC PARAMETERS", ecCert, append(ecParams, sec1PEM(t, ecKey)...), ECDSAP256},
		{"RSA PKCS#1", rsaCert, pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), RSA2048},
		{"RSA PKCS#8", rsaCert, pkcs8PEM(t, rsaKey), RSA2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, err := LoadCA(tt.cert, tt.key, nil)
			if err != nil {
				t.Fatalf("LoadCA() error = %v", err)
			}
			if got := algorithmOf(ca.Certificate().PublicKey); got != tt.wantAlg {
				t.Errorf("CA key algorithm = %s, want %s", got, tt.wantAlg)
			}
			if diff := cmp.Diff(KeyPair{CertPEM: tt.cert, KeyPEM: tt.key}, ca.KeyPair()); diff != "" {
				t.Errorf("KeyPair() is not what was loaded (-want +got):\n%s", diff)
			}
			_, leaf := mustIssue(t, ca, Request{CommonName: "client", Usages: ClientAuth})
			if err := verify(leaf, ca, x509.ExtKeyUsageClientAuth, ""); err != nil {
				t.Errorf("leaf does not verify against the loaded CA: %v", err)
			}
		})
	}
}

func TestLoadCARefuses(t *testing.T) {
	key := newECDSAKey(t)
	caCert := signCert(t, certTemplate("user-ca", nil), key, nil, nil)
	keyPEM := pkcs8PEM(t, key)

	other := mustNewCA(t, CAOptions{CommonName: "other-ca"})
	leafPair, _ := mustIssue(t, other, Request{CommonName: "leaf", Usages: ClientAuth})
	noCertSign := signCert(t, certTemplate("signless-ca", func(c *x509.Certificate) {
		c.KeyUsage = x509.KeyUsageDigitalSignature
	}), key, nil, nil)
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	encrypted := pemBlock("ENCRYPTED PRIVATE KEY", []byte("opaque"))
	legacyEncrypted := pem.EncodeToMemory(&pem.Block{
		Type:    "EC PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00"},
		Bytes:   []byte("opaque"),
	})

	tests := []struct {
		name             string
		cert, key, trust []byte
		wantErr          string
	}{
		{"empty certificate", nil, keyPEM, nil, "CA certificate: empty"},
		{"certificate not PEM", []byte("hello"), keyPEM, nil,
			"CA certificate: not a PEM certificate: data does not contain any valid RSA or ECDSA certificates"},
		{"key given as certificate", keyPEM, keyPEM, nil,
			"CA certificate: not a PEM certificate: data does not contain any valid RSA or ECDSA certificates"},
		{"leaf certificate", leafPair.CertPEM, leafPair.KeyPEM, nil, `certificate "leaf" is not a CA`},
		{"CA may not sign", noCertSign, keyPEM, nil, `CA certificate "signless-ca" may not sign certificates: no keyCertSign key usage`},
		{"empty key", caCert, nil, nil, "CA key: empty"},
		{"key not PEM", caCert, []byte("hello"), nil, "CA key: not a PEM private key (PKCS#1, PKCS#8 or SEC1)"},
		{"certificate given as key", caCert, caCert, nil, "CA key: not a PEM private key (PKCS#1, PKCS#8 or SEC1)"},
		{"PKCS#8 encrypted key", caCert, encrypted, nil, "CA key: encrypted private keys are not supported"},
		{"legacy encrypted key", caCert, legacyEncrypted, nil, "CA key: encrypted private keys are not supported"},
		{"key that cannot sign", caCert, pkcs8PEM(t, x25519), nil, "CA key: private key of type *ecdh.PrivateKey cannot sign"},
		{"another CA's key", caCert, other.KeyPair().KeyPEM, nil, `CA key does not belong to CA certificate "user-ca"`},
		{"bundle not PEM", caCert, keyPEM, []byte("hello"),
			"CA bundle: not a PEM certificate: data does not contain any valid RSA or ECDSA certificates"},
		{"bundle of another CA", caCert, keyPEM, other.KeyPair().CertPEM,
			`CA certificate "user-ca" does not chain to the CA bundle: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCA(tt.cert, tt.key, tt.trust)
			// The bundle error ends with x509's explanation, whose details
			// are not ours to pin.
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("LoadCA() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLoadCAIntermediate loads a CA that a root the user keeps elsewhere
// signed, as cert-manager stores one: tls.crt the intermediate, ca.crt the
// root.
func TestLoadCAIntermediate(t *testing.T) {
	rootKey, interKey := newECDSAKey(t), newECDSAKey(t)
	rootTmpl := certTemplate("root", nil)
	rootPEM := signCert(t, rootTmpl, rootKey, nil, nil)
	root := parseCert(t, rootPEM)
	interPEM := signCert(t, certTemplate("intermediate", nil), interKey, root, rootKey)
	interKeyPEM := pkcs8PEM(t, interKey)

	tests := []struct {
		name         string
		cert, bundle []byte
		wantBundle   [][]byte
	}{
		{name: "ca.crt holds the root", cert: interPEM, bundle: rootPEM, wantBundle: [][]byte{interPEM, rootPEM}},
		{name: "tls.crt holds the chain, ca.crt repeats the root", cert: append(append([]byte{}, interPEM...), rootPEM...), bundle: rootPEM, wantBundle: [][]byte{interPEM, rootPEM}},
		{name: "no ca.crt", cert: interPEM, wantBundle: [][]byte{interPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, err := LoadCA(tt.cert, interKeyPEM, tt.bundle)
			if err != nil {
				t.Fatalf("LoadCA() error = %v", err)
			}
			if diff := cmp.Diff(bytes.Join(tt.wantBundle, nil), ca.BundlePEM()); diff != "" {
				t.Errorf("BundlePEM() (-want +got):\n%s", diff)
			}
			if got := ca.Certificate().Subject.CommonName; got != "intermediate" {
				t.Errorf("signing certificate is %q, want the intermediate", got)
			}
			_, leaf := mustIssue(t, ca, Request{CommonName: "server", DNSNames: []string{"server.example"}, Usages: ServerAuth})
			// Clients that trust only the root need the intermediate from
			// the bundle to build the chain.
			roots := x509.NewCertPool()
			roots.AddCert(root)
			inters := x509.NewCertPool()
			inters.AppendCertsFromPEM(ca.BundlePEM())
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, DNSName: "server.example"}); err != nil {
				t.Errorf("leaf does not verify against the root: %v", err)
			}
		})
	}
}
