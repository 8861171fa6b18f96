package certs

import (
	"crypto/x509"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultRenewFraction is how much of a certificate's lifetime passes before
// it is renewed: a year-long certificate is replaced after eight months,
// leaving four for a failing renewal to be noticed and fixed.
const DefaultRenewFraction = 2.0 / 3

// Due tells whether cert is due for renewal at now: once fraction of its
// lifetime, NotBefore to NotAfter, has passed. at is the moment it is (or
// was) due, whole seconds, for a RequeueAfter. A fraction outside (0, 1]
// means DefaultRenewFraction. A nil certificate is due now.
func Due(cert *x509.Certificate, now time.Time, fraction float64) (due bool, at time.Time) {
	if cert == nil {
		return true, now
	}
	if !(fraction > 0 && fraction <= 1) {
		fraction = DefaultRenewFraction
	}
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	// Certificates carry whole seconds, so rounding loses nothing real and
	// keeps float error from moving the boundary by a nanosecond.
	elapsed := time.Duration(math.Round(float64(lifetime)*fraction/float64(time.Second))) * time.Second
	at = cert.NotBefore.Add(elapsed)
	return !now.Before(at), at
}

// NeedsReissue tells whether the stored pair must be replaced by a new one
// for spec, and why, in a phrase for an event. ca is the signer of a leaf
// spec; it is not used for a CA's spec, which must be self-signed.
//
// A user-supplied CA is not ours to replace: skip NeedsReissue for its spec
// and watch its expiry with Due instead.
func NeedsReissue(existing KeyPair, spec Spec, ca *CA, now time.Time, fraction float64) (bool, string) {
	if len(existing.CertPEM) == 0 {
		return true, "certificate missing"
	}
	if len(existing.KeyPEM) == 0 {
		return true, "private key missing"
	}
	certs, err := parseCertificates(existing.CertPEM)
	if err != nil {
		return true, fmt.Sprintf("certificate unreadable: %v", err)
	}
	cert := certs[0]
	key, err := parsePrivateKey(existing.KeyPEM)
	if err != nil {
		return true, fmt.Sprintf("private key unreadable: %v", err)
	}
	if !publicKeysEqual(key.Public(), cert.PublicKey) {
		return true, "private key does not match certificate"
	}

	if spec.IsCA() {
		if !cert.IsCA || cert.CheckSignatureFrom(cert) != nil {
			return true, "not a self-signed CA"
		}
	} else {
		if ca == nil {
			return true, fmt.Sprintf("signing CA %s unavailable", spec.Signer)
		}
		if !signedBy(cert, ca.cert) {
			return true, "not signed by the current CA"
		}
	}

	want := spec.Request
	var changes []string
	if cert.Subject.CommonName != want.CommonName {
		changes = append(changes, fmt.Sprintf("common name changed: %q → %q", cert.Subject.CommonName, want.CommonName))
	}
	if !sameSet(cert.Subject.Organization, want.Organizations) {
		changes = append(changes, fmt.Sprintf("organizations changed: %s → %s", listOrNone(cert.Subject.Organization), listOrNone(want.Organizations)))
	}
	if !spec.IsCA() {
		var have, wantSANs []string
		have = append(have, cert.DNSNames...)
		for _, ip := range cert.IPAddresses {
			have = append(have, ip.String())
		}
		wantSANs = append(wantSANs, want.DNSNames...)
		for _, ip := range want.IPs {
			wantSANs = append(wantSANs, ip.String())
		}
		if added, removed := diff(have, wantSANs); len(added)+len(removed) > 0 {
			changes = append(changes, "SANs changed: "+describeDiff(added, removed))
		}
		if got := usageOf(cert); got != want.Usages {
			changes = append(changes, fmt.Sprintf("usages changed: %s → %s", got, want.Usages))
		}
	}
	if got, w := algorithmOf(cert.PublicKey), want.Algorithm.orDefault(); got != w {
		changes = append(changes, fmt.Sprintf("key algorithm changed: %s → %s", got, w))
	}
	validity := want.validity()
	if spec.IsCA() && want.Validity == 0 {
		validity = DefaultCAValidity
	}
	// Issuance backdates NotBefore by clockSkew, so that much of the
	// lifetime is not part of the requested validity. Certificates hold
	// whole seconds; anything closer than that is the same validity.
	if got := cert.NotAfter.Sub(cert.NotBefore) - clockSkew; (got - validity).Abs() >= time.Second {
		changes = append(changes, fmt.Sprintf("validity changed: %s → %s", days(got), days(validity)))
	}
	if len(changes) > 0 {
		return true, strings.Join(changes, "; ")
	}

	if !now.Before(cert.NotAfter) {
		return true, "expired at " + cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if due, at := Due(cert, now, fraction); due {
		return true, "renewal due since " + at.UTC().Format(time.RFC3339)
	}
	return false, ""
}

// signedBy reports whether ca issued cert: ca's key made the signature and
// its subject is cert's issuer, as a verifier building the chain needs.
func signedBy(cert, ca *x509.Certificate) bool {
	return string(cert.RawIssuer) == string(ca.RawSubject) && cert.CheckSignatureFrom(ca) == nil
}

// diff lists what want has and have lacks, and the reverse, sorted.
func diff(have, want []string) (added, removed []string) {
	for _, w := range want {
		if !slices.Contains(have, w) {
			added = append(added, w)
		}
	}
	for _, h := range have {
		if !slices.Contains(want, h) {
			removed = append(removed, h)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return slices.Compact(added), slices.Compact(removed)
}

func sameSet(a, b []string) bool {
	added, removed := diff(a, b)
	return len(added) == 0 && len(removed) == 0
}

func describeDiff(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	return strings.Join(parts, "; ")
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// days writes a validity the way leafCertValidityDays is set, when it is a
// whole number of days.
func days(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}
