package certs

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Usage says what a leaf certificate authenticates: a server to its
// clients, a client to its server, or both.
type Usage uint8

const (
	ServerAuth Usage = 1 << iota
	ClientAuth
)

// String is how usages read in events: "server", "client", "server+client".
func (u Usage) String() string {
	switch u {
	case 0:
		return "none"
	case ServerAuth:
		return "server"
	case ClientAuth:
		return "client"
	case ServerAuth | ClientAuth:
		return "server+client"
	}
	return fmt.Sprintf("Usage(%d)", uint8(u))
}

func (u Usage) extKeyUsages() []x509.ExtKeyUsage {
	var out []x509.ExtKeyUsage
	if u&ServerAuth != 0 {
		out = append(out, x509.ExtKeyUsageServerAuth)
	}
	if u&ClientAuth != 0 {
		out = append(out, x509.ExtKeyUsageClientAuth)
	}
	return out
}

// usageOf reads the usages back from a certificate; extended key usages
// other than server and client authentication are not ours and are ignored.
func usageOf(cert *x509.Certificate) Usage {
	var u Usage
	for _, e := range cert.ExtKeyUsage {
		switch e {
		case x509.ExtKeyUsageServerAuth:
			u |= ServerAuth
		case x509.ExtKeyUsageClientAuth:
			u |= ClientAuth
		}
	}
	return u
}

// Request describes a leaf certificate.
type Request struct {
	// CommonName is the user name a client certificate authenticates as.
	CommonName string
	// Organizations are the groups a client certificate authenticates as.
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	Usages        Usage
	// Validity defaults to DefaultLeafValidity.
	Validity time.Duration
	// Algorithm of the new key; defaults to ECDSAP256.
	Algorithm Algorithm
}

func (r Request) validity() time.Duration {
	if r.Validity == 0 {
		return DefaultLeafValidity
	}
	return r.Validity
}

func (r Request) validate() error {
	var errs []error
	if r.CommonName == "" {
		errs = append(errs, errors.New("common name is empty"))
	}
	if r.Usages == 0 {
		errs = append(errs, errors.New("no usages"))
	}
	if r.Usages&^(ServerAuth|ClientAuth) != 0 {
		errs = append(errs, fmt.Errorf("unknown usages %s", r.Usages))
	}
	// A serving certificate without names matches no address a client dials.
	if r.Usages&ServerAuth != 0 && len(r.DNSNames) == 0 && len(r.IPs) == 0 {
		errs = append(errs, errors.New("serving certificate without DNS names or IPs"))
	}
	if r.Validity < 0 {
		errs = append(errs, fmt.Errorf("negative validity %s", r.Validity))
	}
	if err := r.Algorithm.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SplitSANs sorts subject alternative names given as strings (certSANs,
// Service addresses) into DNS names and IPs. Each keeps the order of first
// appearance; blanks and repeats are dropped. IPv4 addresses are in their
// 4-byte form, the form they have when read back from a certificate.
func SplitSANs(sans []string) (dns []string, ips []net.IP) {
	seen := make(map[string]bool, len(sans))
	for _, s := range sans {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if ip := net.ParseIP(s); ip != nil {
			if v4 := ip.To4(); v4 != nil {
				ip = v4
			}
			if key := ip.String(); !seen[key] {
				seen[key] = true
				ips = append(ips, ip)
			}
			continue
		}
		if !seen[s] {
			seen[s] = true
			dns = append(dns, s)
		}
	}
	return dns, ips
}
