package certs

import (
	"crypto"
	"testing"

	"k8s.io/client-go/util/keyutil"
)

func TestNewServiceAccountKey(t *testing.T) {
	tests := []struct {
		alg  Algorithm
		want Algorithm
	}{
		{"", ECDSAP256},
		{RSA2048, RSA2048},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			k, err := NewServiceAccountKey(tt.alg)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckServiceAccountKey(k); err != nil {
				t.Errorf("CheckServiceAccountKey() of a new key: %v", err)
			}
			// Read back the way kube-apiserver reads its key flags.
			private, err := keyutil.ParsePrivateKeyPEM(k.PrivatePEM)
			if err != nil {
				t.Fatalf("sa.key: %v", err)
			}
			pubs, err := keyutil.ParsePublicKeysPEM(k.PublicPEM)
			if err != nil {
				t.Fatalf("sa.pub: %v", err)
			}
			if got := algorithmOf(pubs[0]); got != tt.want {
				t.Errorf("algorithm = %s, want %s", got, tt.want)
			}
			if !publicKeysEqual(private.(crypto.Signer).Public(), pubs[0]) {
				t.Error("sa.pub is not sa.key's public key")
			}
		})
	}
}

func TestCheckServiceAccountKey(t *testing.T) {
	a, err := NewServiceAccountKey(ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewServiceAccountKey(ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		key     ServiceAccountKey
		wantErr string
	}{
		{"no private key", ServiceAccountKey{PublicPEM: a.PublicPEM}, "sa.key: empty"},
		{"private key unreadable", ServiceAccountKey{PrivatePEM: a.PublicPEM, PublicPEM: a.PublicPEM}, "sa.key: not a PEM private key (PKCS#1, PKCS#8 or SEC1)"},
		{"no public key", ServiceAccountKey{PrivatePEM: a.PrivatePEM}, "sa.pub: empty"},
		{"public key unreadable", ServiceAccountKey{PrivatePEM: a.PrivatePEM, PublicPEM: []byte("junk")}, "sa.pub: data does not contain any valid RSA or ECDSA public keys"},
		{"halves of two keys", ServiceAccountKey{PrivatePEM: a.PrivatePEM, PublicPEM: b.PublicPEM}, "sa.pub does not belong to sa.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckServiceAccountKey(tt.key)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("CheckServiceAccountKey() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
