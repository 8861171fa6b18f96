package certs

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSplitSANs(t *testing.T) {
	tests := []struct {
		name    string
		sans    []string
		wantDNS []string
		wantIPs []net.IP
	}{
		{name: "nothing"},
		{
			name:    "mixed, in order",
			sans:    []string{"api.example.com", "10.0.0.1", "fd00::1", "*.example.com", "localhost"},
			wantDNS: []string{"api.example.com", "*.example.com", "localhost"},
			wantIPs: []net.IP{{10, 0, 0, 1}, net.ParseIP("fd00::1")},
		},
		{
			name:    "blanks and repeats dropped, spaces trimmed",
			sans:    []string{"", " a.example ", "a.example", "10.0.0.1", "  ", "10.0.0.1", "fd00::1", "fd00:0::1"},
			wantDNS: []string{"a.example"},
			wantIPs: []net.IP{{10, 0, 0, 1}, net.ParseIP("fd00::1")},
		},
		{
			name:    "IPv4 in 4-byte form even when written IPv4-mapped",
			sans:    []string{"::ffff:192.0.2.1", "192.0.2.1"},
			wantIPs: []net.IP{{192, 0, 2, 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns, ips := SplitSANs(tt.sans)
			if diff := cmp.Diff(tt.wantDNS, dns); diff != "" {
				t.Errorf("DNS names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIPs, ips); diff != "" {
				t.Errorf("IPs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	ecCA := mustNewCA(t, CAOptions{CommonName: "ec-ca"})
	rsaCA := mustNewCA(t, CAOptions{CommonName: "rsa-ca", Algorithm: RSA2048})

	allUsages := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tests := []struct {
		name         string
		ca           *CA
		req          Request
		wantAlg      Algorithm
		wantValidity time.Duration
		wantEKUs     []x509.ExtKeyUsage
		wantKU       x509.KeyUsage
	}{
		{
			name:         "ECDSA server with defaults",
			ca:           ecCA,
			req:          Request{CommonName: "kube-apiserver", DNSNames: []string{"api.example"}, IPs: []net.IP{{10, 0, 0, 1}}, Usages: ServerAuth},
			wantAlg:      ECDSAP256,
			wantValidity: DefaultLeafValidity,
			wantEKUs:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			wantKU:       x509.KeyUsageDigitalSignature,
		},
		{
			name:         "ECDSA client with groups",
			ca:           ecCA,
			req:          Request{CommonName: AdminUser, Organizations: []string{MastersGroup}, Usages: ClientAuth, Validity: 30 * 24 * time.Hour},
			wantAlg:      ECDSAP256,
			wantValidity: 30 * 24 * time.Hour,
			wantEKUs:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			wantKU:       x509.KeyUsageDigitalSignature,
		},
		{
			name:         "ECDSA server and client from an RSA CA",
			ca:           rsaCA,
			req:          Request{CommonName: "etcd-server", DNSNames: []string{"etcd.example"}, Usages: ServerAuth | ClientAuth},
			wantAlg:      ECDSAP256,
			wantValidity: DefaultLeafValidity,
			wantEKUs:     allUsages,
			wantKU:       x509.KeyUsageDigitalSignature,
		},
		{
			name:         "RSA server from an RSA CA",
			ca:           rsaCA,
			req:          Request{CommonName: "webhook", DNSNames: []string{"webhook.example"}, Usages: ServerAuth, Algorithm: RSA2048, Validity: time.Hour},
			wantAlg:      RSA2048,
			wantValidity: time.Hour,
			wantEKUs:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			wantKU:       x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now().Truncate(time.Second)
			pair, cert := mustIssue(t, tt.ca, tt.req)

			if parsed := parseCert(t, pair.CertPEM); !parsed.Equal(cert) {
				t.Error("returned certificate is not the one in CertPEM")
			}
			block, _ := pem.Decode(pair.KeyPEM)
			if block == nil || block.Type != "PRIVATE KEY" {
				t.Fatalf("key is not a PKCS#8 PEM block: %q", pair.KeyPEM)
			}
			key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				t.Fatalf("parse PKCS#8 key: %v", err)
			}
			if !publicKeysEqual(cert.PublicKey, key.(crypto.Signer).Public()) {
				t.Error("key does not match certificate")
			}

			type fields struct {
				CN       string
				O        []string
				DNS      []string
				IPs      []net.IP
				EKUs     []x509.ExtKeyUsage
				KU       x509.KeyUsage
				IsCA     bool
				Alg      Algorithm
				Lifetime time.Duration
			}
			got := fields{
				CN: cert.Subject.CommonName, O: cert.Subject.Organization,
				DNS: cert.DNSNames, IPs: cert.IPAddresses,
				EKUs: cert.ExtKeyUsage, KU: cert.KeyUsage, IsCA: cert.IsCA,
				Alg:      algorithmOf(cert.PublicKey),
				Lifetime: cert.NotAfter.Sub(cert.NotBefore),
			}
			want := fields{
				CN: tt.req.CommonName, O: tt.req.Organizations,
				DNS: tt.req.DNSNames, IPs: tt.req.IPs,
				EKUs: tt.wantEKUs, KU: tt.wantKU,
				Alg:      tt.wantAlg,
				Lifetime: tt.wantValidity + clockSkew,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("certificate (-want +got):\n%s", diff)
			}
			if nb := cert.NotBefore; nb.Before(start.Add(-clockSkew)) || nb.After(time.Now().Add(-clockSkew)) {
				t.Errorf("NotBefore %s is not issuance time less %s", nb, clockSkew)
			}
			if bits := cert.SerialNumber.BitLen(); cert.SerialNumber.Sign() <= 0 || bits > 128 || bits < 64 {
				t.Errorf("serial %s (%d bits) is not a random positive 128-bit number", cert.SerialNumber, bits)
			}

			// The chain verifies for the usages asked for, and only those.
			name := ""
			if len(tt.req.DNSNames) > 0 {
				name = tt.req.DNSNames[0]
			}
			for _, eku := range allUsages {
				err := verify(cert, tt.ca, eku, name)
				wanted := false
				for _, w := range tt.wantEKUs {
					wanted = wanted || w == eku
				}
				if wanted && err != nil {
					t.Errorf("verify for %v: %v", eku, err)
				}
				if !wanted && err == nil {
					t.Errorf("verifies for %v, which was not asked for", eku)
				}
			}
		})
	}

	t.Run("serials differ", func(t *testing.T) {
		req := Request{CommonName: "c", Usages: ClientAuth}
		_, a := mustIssue(t, ecCA, req)
		_, b := mustIssue(t, ecCA, req)
		if a.SerialNumber.Cmp(b.SerialNumber) == 0 {
			t.Errorf("two certificates share serial %s", a.SerialNumber)
		}
	})
}

func TestIssueRefuses(t *testing.T) {
	ca := mustNewCA(t, CAOptions{CommonName: "ca"})
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{"no common name", Request{Usages: ClientAuth}, `issue "": common name is empty`},
		{"no usages", Request{CommonName: "c"}, `issue "c": no usages`},
		{"unknown usage", Request{CommonName: "c", Usages: 4 | ClientAuth}, `issue "c": unknown usages Usage(6)`},
		{"server without names", Request{CommonName: "s", Usages: ServerAuth}, `issue "s": serving certificate without DNS names or IPs`},
		{"negative validity", Request{CommonName: "c", Usages: ClientAuth, Validity: -time.Second}, `issue "c": negative validity -1s`},
		{"unknown algorithm", Request{CommonName: "c", Usages: ClientAuth, Algorithm: "RSA-1024"}, `issue "c": unknown key algorithm "RSA-1024" (want ECDSA-P256, RSA-2048, RSA-3072 or RSA-4096)`},
		{"every problem at once", Request{Validity: -time.Second}, "issue \"\": common name is empty\nno usages\nnegative validity -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ca.Issue(tt.req)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Issue() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
