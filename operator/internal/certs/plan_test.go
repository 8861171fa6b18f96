package certs

import (
	"crypto/x509"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planned is what a test reads of a Spec.
type planned struct {
	ID       ID
	Signer   ID
	CN       string
	O        []string
	DNS      []string
	IPs      []string
	Usages   Usage
	Validity time.Duration
}

func summarize(specs []Spec) []planned {
	out := make([]planned, 0, len(specs))
	for _, s := range specs {
		p := planned{
			ID: s.ID, Signer: s.Signer,
			CN: s.Request.CommonName, O: s.Request.Organizations,
			DNS: s.Request.DNSNames, Usages: s.Request.Usages,
			Validity: s.Request.Validity,
		}
		for _, ip := range s.Request.IPs {
			p.IPs = append(p.IPs, ip.String())
		}
		out = append(out, p)
	}
	return out
}

func clients(validity time.Duration) []planned {
	return []planned{
		{ID: IDFrontProxyClient, Signer: IDFrontProxyCA, CN: "front-proxy-client", Usages: ClientAuth, Validity: validity},
		{ID: IDAdmin, Signer: IDCA, CN: "system:admin", O: []string{"system:masters"}, Usages: ClientAuth, Validity: validity},
		{ID: IDKubeControllerManager, Signer: IDCA, CN: "system:kube-controller-manager", Usages: ClientAuth, Validity: validity},
		{ID: IDControllerManager, Signer: IDCA, CN: "system:flotilla:controller-manager", Usages: ClientAuth, Validity: validity},
		{ID: IDScheduler, Signer: IDCA, CN: "system:flotilla:scheduler", Usages: ClientAuth, Validity: validity},
		{ID: IDDescheduler, Signer: IDCA, CN: "system:flotilla:descheduler", Usages: ClientAuth, Validity: validity},
		{ID: IDWebhookClient, Signer: IDCA, CN: "system:flotilla:webhook", Usages: ClientAuth, Validity: validity},
		{ID: IDOperator, Signer: IDCA, CN: "system:flotilla:operator", O: []string{"system:flotilla:operators"}, Usages: ClientAuth, Validity: validity},
	}
}

// servers are the webhook's and the aggregated API server's serving
// certificates of instance name in ns.
func servers(name, ns, domain string, validity time.Duration, aggregatedSANs ...string) []planned {
	svc := func(s string) []string {
		return []string{s, s + "." + ns, s + "." + ns + ".svc", s + "." + ns + ".svc." + domain}
	}
	var dns, ips []string
	for _, san := range aggregatedSANs {
		if _, err := netip.ParseAddr(san); err == nil {
			ips = append(ips, san)
		} else {
			dns = append(dns, san)
		}
	}
	return []planned{
		{ID: IDWebhook, Signer: IDCA, CN: "flotilla-webhook", Usages: ServerAuth, Validity: validity, DNS: svc(name + "-webhook")},
		{ID: IDAggregatedAPIServerClient, Signer: IDCA, CN: "system:flotilla:aggregated-apiserver", Usages: ClientAuth, Validity: validity},
		{
			ID: IDAggregatedAPIServer, Signer: IDCA, CN: "karmada-aggregated-apiserver", Usages: ServerAuth, Validity: validity,
			DNS: append(append([]string{"karmada-aggregated-apiserver.karmada-system.svc", "karmada-aggregated-apiserver.karmada-system.svc." + domain},
				svc(name+"-aggregated-apiserver")...), append([]string{"localhost"}, dns...)...),
			IPs: append([]string{"127.0.0.1"}, ips...),
		},
	}
}

func TestPlan(t *testing.T) {
	const year = DefaultLeafValidity
	tests := []struct {
		name   string
		params Params
		want   []planned
	}{
		{
			name: "local etcd, three members, every extra",
			params: Params{
				Name: "fl", Namespace: "ns", DNSDomain: "corp.local",
				ServiceSubnet:               netip.MustParsePrefix("10.96.0.0/12"),
				APIServerCertSANs:           []string{"api.example.com", "192.0.2.10", "localhost"},
				ServiceAddresses:            []string{"198.51.100.7", "lb.example.net", "192.0.2.10"},
				EtcdReplicas:                3,
				EtcdServerCertSANs:          []string{"etcd.example.com", "192.0.2.20"},
				EtcdPeerCertSANs:            []string{"peer.example.com"},
				LeafValidity:                90 * 24 * time.Hour,
				AggregatedAPIServerCertSANs: []string{"clusters.example.com", "192.0.2.30"},
			},
			want: append([]planned{
				{ID: IDCA, CN: "flotilla-ca", Validity: DefaultCAValidity},
				{ID: IDEtcdCA, CN: "flotilla-etcd-ca", Validity: DefaultCAValidity},
				{ID: IDFrontProxyCA, CN: "flotilla-front-proxy-ca", Validity: DefaultCAValidity},
				{
					ID: IDAPIServer, Signer: IDCA, CN: "kube-apiserver", Usages: ServerAuth, Validity: 90 * 24 * time.Hour,
					DNS: []string{
						"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.corp.local",
						"fl-apiserver", "fl-apiserver.ns", "fl-apiserver.ns.svc", "fl-apiserver.ns.svc.corp.local",
						"localhost", "api.example.com", "lb.example.net",
					},
					IPs: []string{"127.0.0.1", "10.96.0.1", "192.0.2.10", "198.51.100.7"},
				},
				{ID: IDAPIServerEtcdClient, Signer: IDEtcdCA, CN: "kube-apiserver-etcd-client", Usages: ClientAuth, Validity: 90 * 24 * time.Hour},
				{
					ID: IDEtcdServer, Signer: IDEtcdCA, CN: "etcd-server", Usages: ServerAuth | ClientAuth, Validity: 90 * 24 * time.Hour,
					DNS: []string{
						"fl-etcd-client", "fl-etcd-client.ns", "fl-etcd-client.ns.svc", "fl-etcd-client.ns.svc.corp.local",
						"fl-etcd-0.fl-etcd.ns.svc.corp.local", "fl-etcd-1.fl-etcd.ns.svc.corp.local", "fl-etcd-2.fl-etcd.ns.svc.corp.local",
						"*.fl-etcd.ns.svc.corp.local", "localhost", "etcd.example.com",
					},
					IPs: []string{"127.0.0.1", "192.0.2.20"},
				},
				{
					ID: IDEtcdPeer, Signer: IDEtcdCA, CN: "etcd-peer", Usages: ServerAuth | ClientAuth, Validity: 90 * 24 * time.Hour,
					DNS: []string{
						"fl-etcd-0.fl-etcd.ns.svc.corp.local", "fl-etcd-1.fl-etcd.ns.svc.corp.local", "fl-etcd-2.fl-etcd.ns.svc.corp.local",
						"*.fl-etcd.ns.svc.corp.local", "localhost", "peer.example.com",
					},
					IPs: []string{"127.0.0.1"},
				},
			}, append(clients(90*24*time.Hour), servers("fl", "ns", "corp.local", 90*24*time.Hour, "clusters.example.com", "192.0.2.30")...)...),
		},
		{
			name:   "defaults: cluster.local, one etcd member, no subnet, a year",
			params: Params{Name: "k", Namespace: "karmada-system"},
			want: append([]planned{
				{ID: IDCA, CN: "flotilla-ca", Validity: DefaultCAValidity},
				{ID: IDEtcdCA, CN: "flotilla-etcd-ca", Validity: DefaultCAValidity},
				{ID: IDFrontProxyCA, CN: "flotilla-front-proxy-ca", Validity: DefaultCAValidity},
				{
					ID: IDAPIServer, Signer: IDCA, CN: "kube-apiserver", Usages: ServerAuth, Validity: year,
					DNS: []string{
						"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
						"k-apiserver", "k-apiserver.karmada-system", "k-apiserver.karmada-system.svc", "k-apiserver.karmada-system.svc.cluster.local",
						"localhost",
					},
					IPs: []string{"127.0.0.1"},
				},
				{ID: IDAPIServerEtcdClient, Signer: IDEtcdCA, CN: "kube-apiserver-etcd-client", Usages: ClientAuth, Validity: year},
				{
					ID: IDEtcdServer, Signer: IDEtcdCA, CN: "etcd-server", Usages: ServerAuth | ClientAuth, Validity: year,
					DNS: []string{
						"k-etcd-client", "k-etcd-client.karmada-system", "k-etcd-client.karmada-system.svc", "k-etcd-client.karmada-system.svc.cluster.local",
						"k-etcd-0.k-etcd.karmada-system.svc.cluster.local", "*.k-etcd.karmada-system.svc.cluster.local", "localhost",
					},
					IPs: []string{"127.0.0.1"},
				},
				{
					ID: IDEtcdPeer, Signer: IDEtcdCA, CN: "etcd-peer", Usages: ServerAuth | ClientAuth, Validity: year,
					DNS: []string{"k-etcd-0.k-etcd.karmada-system.svc.cluster.local", "*.k-etcd.karmada-system.svc.cluster.local", "localhost"},
					IPs: []string{"127.0.0.1"},
				},
			}, append(clients(year), servers("k", "karmada-system", "cluster.local", year)...)...),
		},
		{
			name: "external etcd, IPv6 service subnet",
			params: Params{
				Name: "k", Namespace: "ns", ExternalEtcd: true,
				ServiceSubnet:      netip.MustParsePrefix("fd00:10:96::/108"),
				EtcdServerCertSANs: []string{"ignored.example.com"},
			},
			want: append([]planned{
				{ID: IDCA, CN: "flotilla-ca", Validity: DefaultCAValidity},
				{ID: IDFrontProxyCA, CN: "flotilla-front-proxy-ca", Validity: DefaultCAValidity},
				{
					ID: IDAPIServer, Signer: IDCA, CN: "kube-apiserver", Usages: ServerAuth, Validity: year,
					DNS: []string{
						"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
						"k-apiserver", "k-apiserver.ns", "k-apiserver.ns.svc", "k-apiserver.ns.svc.cluster.local",
						"localhost",
					},
					IPs: []string{"127.0.0.1", "fd00:10:96::1"},
				},
			}, append(clients(year), servers("k", "ns", "cluster.local", year)...)...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := Plan(tt.params)
			if diff := cmp.Diff(tt.want, summarize(specs)); diff != "" {
				t.Errorf("Plan() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(specs, Plan(tt.params)); diff != "" {
				t.Errorf("Plan() differs between two calls:\n%s", diff)
			}
			for _, s := range specs {
				if s.Request.Algorithm != tt.params.Algorithm {
					t.Errorf("%s: algorithm %q, want the instance's %q", s.ID, s.Request.Algorithm, tt.params.Algorithm)
				}
			}
		})
	}
}

func TestPlanAlgorithm(t *testing.T) {
	for _, s := range Plan(Params{Name: "k", Namespace: "ns", Algorithm: RSA3072}) {
		if s.Request.Algorithm != RSA3072 {
			t.Errorf("%s: algorithm %q, want %q", s.ID, s.Request.Algorithm, RSA3072)
		}
		if s.IsCA() && s.CAOptions().Algorithm != RSA3072 {
			t.Errorf("%s: CAOptions algorithm %q, want %q", s.ID, s.CAOptions().Algorithm, RSA3072)
		}
	}
}

// TestPlanIssued issues the whole set the way the controller does, then
// checks each certificate is accepted where it is used and that
// NeedsReissue is content with what was just issued.
func TestPlanIssued(t *testing.T) {
	params := Params{
		Name: "fl", Namespace: "ns",
		ServiceSubnet:     netip.MustParsePrefix("10.96.0.0/12"),
		APIServerCertSANs: []string{"api.example.com", "192.0.2.10"},
		EtcdReplicas:      3,
	}
	cas := map[ID]*CA{}
	pairs := map[ID]KeyPair{}
	certs := map[ID]*x509.Certificate{}
	specs := Plan(params)
	for _, s := range specs {
		if s.IsCA() {
			ca := mustNewCA(t, s.CAOptions())
			cas[s.ID], pairs[s.ID], certs[s.ID] = ca, ca.KeyPair(), ca.Certificate()
			continue
		}
		signer := cas[s.Signer]
		if signer == nil {
			t.Fatalf("%s is planned before its CA %s", s.ID, s.Signer)
		}
		pairs[s.ID], certs[s.ID] = mustIssue(t, signer, s.Request)
	}

	now := time.Now()
	for _, s := range specs {
		if reissue, reason := NeedsReissue(pairs[s.ID], s, cas[s.Signer], now, 0); reissue {
			t.Errorf("%s: NeedsReissue right after issuance: %s", s.ID, reason)
		}
	}

	uses := []struct {
		id    ID
		usage x509.ExtKeyUsage
		name  string
	}{
		{IDAPIServer, x509.ExtKeyUsageServerAuth, "kubernetes.default.svc"},
		{IDAPIServer, x509.ExtKeyUsageServerAuth, "fl-apiserver.ns.svc.cluster.local"},
		{IDAPIServer, x509.ExtKeyUsageServerAuth, "api.example.com"},
		{IDAPIServer, x509.ExtKeyUsageServerAuth, "10.96.0.1"},
		{IDAPIServer, x509.ExtKeyUsageServerAuth, "192.0.2.10"},
		{IDEtcdServer, x509.ExtKeyUsageServerAuth, "fl-etcd-client.ns.svc"},
		{IDEtcdServer, x509.ExtKeyUsageServerAuth, "fl-etcd-2.fl-etcd.ns.svc.cluster.local"},
		{IDEtcdServer, x509.ExtKeyUsageClientAuth, ""},
		{IDEtcdPeer, x509.ExtKeyUsageServerAuth, "fl-etcd-1.fl-etcd.ns.svc.cluster.local"},
		{IDEtcdPeer, x509.ExtKeyUsageClientAuth, ""},
		{IDAPIServerEtcdClient, x509.ExtKeyUsageClientAuth, ""},
		{IDFrontProxyClient, x509.ExtKeyUsageClientAuth, ""},
		{IDAdmin, x509.ExtKeyUsageClientAuth, ""},
		{IDOperator, x509.ExtKeyUsageClientAuth, ""},
		{IDWebhook, x509.ExtKeyUsageServerAuth, "fl-webhook.ns.svc"},
		// The name the API server's aggregator verifies.
		{IDAggregatedAPIServer, x509.ExtKeyUsageServerAuth, "karmada-aggregated-apiserver.karmada-system.svc"},
		{IDAggregatedAPIServer, x509.ExtKeyUsageServerAuth, "fl-aggregated-apiserver.ns.svc"},
		{IDAggregatedAPIServerClient, x509.ExtKeyUsageClientAuth, ""},
	}
	for _, u := range uses {
		spec := specByID(t, specs, u.id)
		if err := verify(certs[u.id], cas[spec.Signer], u.usage, u.name); err != nil {
			t.Errorf("%s for %v %q: %v", u.id, u.usage, u.name, err)
		}
	}
	// A certificate of one CA is no key to another's servers: the API
	// server's client certificate for etcd is not an API server client.
	if err := verify(certs[IDAPIServerEtcdClient], cas[IDCA], x509.ExtKeyUsageClientAuth, ""); err == nil {
		t.Error("etcd client certificate verifies against the API server's CA")
	}
}

func specByID(t *testing.T, specs []Spec, id ID) Spec {
	t.Helper()
	for _, s := range specs {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no spec %s", id)
	return Spec{}
}
