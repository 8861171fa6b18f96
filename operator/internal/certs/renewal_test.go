package certs

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	threeHours := &x509.Certificate{NotBefore: t0, NotAfter: t0.Add(3 * time.Hour)}
	// A real default leaf: a year plus the backdating.
	year := &x509.Certificate{NotBefore: t0, NotAfter: t0.Add(DefaultLeafValidity + clockSkew)}
	yearDue := t0.Add(5840*time.Hour + 3*time.Minute + 20*time.Second) // two thirds of 8760h05m

	tests := []struct {
		name     string
		cert     *x509.Certificate
		now      time.Time
		fraction float64
		wantDue  bool
		wantAt   time.Time
	}{
		{"fresh", threeHours, t0, 0, false, t0.Add(2 * time.Hour)},
		{"a second before two thirds", threeHours, t0.Add(2*time.Hour - time.Second), 0, false, t0.Add(2 * time.Hour)},
		{"a nanosecond before two thirds", threeHours, t0.Add(2*time.Hour - 1), 0, false, t0.Add(2 * time.Hour)},
		{"at two thirds", threeHours, t0.Add(2 * time.Hour), 0, true, t0.Add(2 * time.Hour)},
		{"past two thirds", threeHours, t0.Add(150 * time.Minute), 0, true, t0.Add(2 * time.Hour)},
		{"expired", threeHours, t0.Add(4 * time.Hour), 0, true, t0.Add(2 * time.Hour)},
		{"explicit two thirds", threeHours, t0.Add(2 * time.Hour), 2.0 / 3, true, t0.Add(2 * time.Hour)},
		{"half", threeHours, t0.Add(89 * time.Minute), 0.5, false, t0.Add(90 * time.Minute)},
		{"at expiry only", threeHours, t0.Add(3*time.Hour - time.Second), 1, false, t0.Add(3 * time.Hour)},
		{"negative fraction is the default", threeHours, t0.Add(2 * time.Hour), -1, true, t0.Add(2 * time.Hour)},
		{"fraction over one is the default", threeHours, t0.Add(2 * time.Hour), 1.5, true, t0.Add(2 * time.Hour)},
		{"a year, just before", year, yearDue.Add(-time.Second), 0, false, yearDue},
		{"a year, on time", year, yearDue, 0, true, yearDue},
		{"no certificate", nil, t0, 0, true, t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, at := Due(tt.cert, tt.now, tt.fraction)
			if due != tt.wantDue || !at.Equal(tt.wantAt) {
				t.Errorf("Due() = %v, %s; want %v, %s", due, at, tt.wantDue, tt.wantAt)
			}
		})
	}
}

func TestNeedsReissue(t *testing.T) {
	const month = 30 * 24 * time.Hour
	ca := mustNewCA(t, CAOptions{CommonName: "ca"})
	otherCA := mustNewCA(t, CAOptions{CommonName: "ca"}) // same name, new key: a regenerated CA
	spec := Spec{ID: "etcd-server", Signer: IDCA, Request: Request{
		CommonName:    "etcd",
		Organizations: []string{"flotilla"},
		DNSNames:      []string{"etcd.example", "localhost"},
		IPs:           []net.IP{{127, 0, 0, 1}},
		Usages:        ServerAuth | ClientAuth,
		Validity:      month,
	}}
	pair, cert := mustIssue(t, ca, spec.Request)
	otherPair, _ := mustIssue(t, ca, spec.Request)
	fromOtherCA, _ := mustIssue(t, otherCA, spec.Request)
	issued := cert.NotBefore.Add(clockSkew)
	dueAt := cert.NotBefore.Add(20*24*time.Hour + 3*time.Minute + 20*time.Second) // two thirds of 30d05m

	caSpec := Spec{ID: IDCA, Request: Request{CommonName: "ca", Validity: DefaultCAValidity}}

	with := func(edit func(*Spec)) Spec {
		s := spec
		s.Request.DNSNames = append([]string(nil), spec.Request.DNSNames...)
		edit(&s)
		return s
	}

	tests := []struct {
		name     string
		existing KeyPair
		spec     Spec
		ca       *CA
		now      time.Time
		fraction float64
		want     string // empty: no reissue
	}{
		{name: "current", existing: pair, spec: spec, ca: ca, now: issued},
		{name: "current until due", existing: pair, spec: spec, ca: ca, now: dueAt.Add(-time.Second)},
		{name: "no certificate", existing: KeyPair{KeyPEM: pair.KeyPEM}, spec: spec, ca: ca, now: issued, want: "certificate missing"},
		{name: "no key", existing: KeyPair{CertPEM: pair.CertPEM}, spec: spec, ca: ca, now: issued, want: "private key missing"},
		{
			name: "certificate unreadable", existing: KeyPair{CertPEM: []byte("junk"), KeyPEM: pair.KeyPEM}, spec: spec, ca: ca, now: issued,
			want: "certificate unreadable: not a PEM certificate: data does not contain any valid RSA or ECDSA certificates",
		},
		{
			name: "key unreadable", existing: KeyPair{CertPEM: pair.CertPEM, KeyPEM: pair.CertPEM}, spec: spec, ca: ca, now: issued,
			want: "private key unreadable: not a PEM private key (PKCS#1, PKCS#8 or SEC1)",
		},
		{
			name: "key of another certificate", existing: KeyPair{CertPEM: pair.CertPEM, KeyPEM: otherPair.KeyPEM}, spec: spec, ca: ca, now: issued,
			want: "private key does not match certificate",
		},
		{name: "CA regenerated", existing: fromOtherCA, spec: spec, ca: ca, now: issued, want: "not signed by the current CA"},
		{name: "signing CA not loaded", existing: pair, spec: spec, ca: nil, now: issued, want: "signing CA ca unavailable"},
		{
			name: "common name", existing: pair, spec: with(func(s *Spec) { s.Request.CommonName = "etcd-server" }), ca: ca, now: issued,
			want: `common name changed: "etcd" → "etcd-server"`,
		},
		{
			name: "organizations", existing: pair, spec: with(func(s *Spec) { s.Request.Organizations = nil }), ca: ca, now: issued,
			want: "organizations changed: flotilla → none",
		},
		{
			name: "SAN added", existing: pair, spec: with(func(s *Spec) { s.Request.DNSNames = append(s.Request.DNSNames, "foo.example.com") }), ca: ca, now: issued,
			want: "SANs changed: added foo.example.com",
		},
		{
			name: "SANs added and removed", existing: pair,
			spec: with(func(s *Spec) { s.Request.DNSNames = []string{"etcd.example"}; s.Request.IPs = []net.IP{{10, 0, 0, 1}} }), ca: ca, now: issued,
			want: "SANs changed: added 10.0.0.1; removed 127.0.0.1, localhost",
		},
		{
			name: "SANs reordered", existing: pair, spec: with(func(s *Spec) { s.Request.DNSNames = []string{"localhost", "etcd.example"} }), ca: ca, now: issued,
		},
		{
			name: "usages", existing: pair, spec: with(func(s *Spec) { s.Request.Usages = ServerAuth }), ca: ca, now: issued,
			want: "usages changed: server+client → server",
		},
		{
			name: "algorithm", existing: pair, spec: with(func(s *Spec) { s.Request.Algorithm = RSA2048 }), ca: ca, now: issued,
			want: "key algorithm changed: ECDSA-P256 → RSA-2048",
		},
		{
			name: "validity", existing: pair, spec: with(func(s *Spec) { s.Request.Validity = 2 * month }), ca: ca, now: issued,
			want: "validity changed: 30d → 60d",
		},
		{
			name: "validity back to the default", existing: pair, spec: with(func(s *Spec) { s.Request.Validity = 0 }), ca: ca, now: issued,
			want: "validity changed: 30d → 365d",
		},
		{
			name: "several changes at once", existing: pair,
			spec: with(func(s *Spec) {
				s.Request.CommonName = "e"
				s.Request.DNSNames = append(s.Request.DNSNames, "x.example")
			}), ca: ca, now: dueAt,
			want: `common name changed: "etcd" → "e"; SANs changed: added x.example`,
		},
		{name: "due", existing: pair, spec: spec, ca: ca, now: dueAt, want: "renewal due since " + dueAt.Format(time.RFC3339)},
		{
			name: "due sooner with a smaller fraction", existing: pair, spec: spec, ca: ca, now: cert.NotBefore.Add(15*24*time.Hour + 150*time.Second), fraction: 0.5,
			want: "renewal due since " + cert.NotBefore.Add(15*24*time.Hour+150*time.Second).Format(time.RFC3339),
		},
		{name: "expired", existing: pair, spec: spec, ca: ca, now: cert.NotAfter, want: "expired at " + cert.NotAfter.Format(time.RFC3339)},

		{name: "CA current", existing: ca.KeyPair(), spec: caSpec, now: issued},
		{name: "CA spec given a leaf", existing: pair, spec: caSpec, now: issued, want: "not a self-signed CA"},
		{
			name: "CA renamed", existing: ca.KeyPair(), spec: Spec{ID: IDCA, Request: Request{CommonName: "flotilla-ca", Validity: DefaultCAValidity}}, now: issued,
			want: `common name changed: "ca" → "flotilla-ca"`,
		},
		{
			name: "CA due", existing: ca.KeyPair(), spec: caSpec, now: issued.Add(7 * 365 * 24 * time.Hour),
			want: "renewal due since " + ca.Certificate().NotBefore.Add(58400*time.Hour+200*time.Second).Format(time.RFC3339),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reissue, reason := NeedsReissue(tt.existing, tt.spec, tt.ca, tt.now, tt.fraction)
			if diff := cmp.Diff(tt.want, reason); diff != "" || reissue != (tt.want != "") {
				t.Errorf("NeedsReissue() = %v, %q; want %v, %q", reissue, reason, tt.want != "", tt.want)
			}
		})
	}
}
