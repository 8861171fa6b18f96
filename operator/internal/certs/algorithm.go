package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// Algorithm is the kind of key generated for a certificate or a signing key.
// The zero value means ECDSAP256.
type Algorithm string

const (
	// ECDSAP256 is the default: small keys, fast handshakes, and accepted by
	// every component of the control plane.
	ECDSAP256 Algorithm = "ECDSA-P256"
	RSA2048   Algorithm = "RSA-2048"
	RSA3072   Algorithm = "RSA-3072"
	RSA4096   Algorithm = "RSA-4096"
)

// orDefault resolves the zero value.
func (a Algorithm) orDefault() Algorithm {
	if a == "" {
		return ECDSAP256
	}
	return a
}

// Validate reports whether a is one of the known algorithms (or empty).
func (a Algorithm) Validate() error {
	switch a.orDefault() {
	case ECDSAP256, RSA2048, RSA3072, RSA4096:
		return nil
	}
	return fmt.Errorf("unknown key algorithm %q (want %s, %s, %s or %s)", string(a), ECDSAP256, RSA2048, RSA3072, RSA4096)
}

// generateKey makes a new private key of this algorithm.
func (a Algorithm) generateKey() (crypto.Signer, error) {
	var bits int
	switch a.orDefault() {
	case ECDSAP256:
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate %s key: %w", ECDSAP256, err)
		}
		return key, nil
	case RSA2048:
		bits = 2048
	case RSA3072:
		bits = 3072
	case RSA4096:
		bits = 4096
	default:
		return nil, a.Validate()
	}
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", a, err)
	}
	return key, nil
}

// algorithmOf names the algorithm of pub, or describes the key when it is
// none of ours (a user's CA may hold any key).
func algorithmOf(pub crypto.PublicKey) Algorithm {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return ECDSAP256
		}
		return Algorithm("ECDSA-" + k.Curve.Params().Name)
	case *rsa.PublicKey:
		return Algorithm(fmt.Sprintf("RSA-%d", k.N.BitLen()))
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return Algorithm(fmt.Sprintf("%T", pub))
}

// encodePKCS8 is the one encoding this package writes private keys in: every
// component (Go's crypto/tls, etcd, kube-apiserver's key-file flags) reads it
// for RSA and ECDSA alike.
func encodePKCS8(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
