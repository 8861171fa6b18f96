package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"k8s.io/client-go/util/keyutil"
)

// ServiceAccountKey is the key pair the API server signs service account
// tokens with (sa.key, --service-account-signing-key-file) and checks them
// with (sa.pub, --service-account-key-file). Unlike certificates it is never
// renewed on a schedule: replacing it invalidates every token issued.
type ServiceAccountKey struct {
	PrivatePEM []byte // PKCS#8
	PublicPEM  []byte // PKIX
}

// NewServiceAccountKey generates a service account signing key.
func NewServiceAccountKey(alg Algorithm) (ServiceAccountKey, error) {
	key, err := alg.generateKey()
	if err != nil {
		return ServiceAccountKey{}, fmt.Errorf("service account key: %w", err)
	}
	private, err := encodePKCS8(key)
	if err != nil {
		return ServiceAccountKey{}, fmt.Errorf("service account key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return ServiceAccountKey{}, fmt.Errorf("service account key: encode public key: %w", err)
	}
	return ServiceAccountKey{
		PrivatePEM: private,
		PublicPEM:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	}, nil
}

// CheckServiceAccountKey tells whether a stored key pair is usable: both
// halves readable and belonging together.
func CheckServiceAccountKey(k ServiceAccountKey) error {
	key, err := parsePrivateKey(k.PrivatePEM)
	if err != nil {
		return fmt.Errorf("sa.key: %w", err)
	}
	if len(k.PublicPEM) == 0 {
		return errors.New("sa.pub: empty")
	}
	pubs, err := keyutil.ParsePublicKeysPEM(k.PublicPEM)
	if err != nil {
		return fmt.Errorf("sa.pub: %w", err)
	}
	if !publicKeysEqual(key.Public(), pubs[0]) {
		return errors.New("sa.pub does not belong to sa.key")
	}
	return nil
}
