package certs

import (
	"fmt"
	"net/netip"
	"time"
)

// ID names one entry of an instance's certificate set. IDs are stable: the
// controller names Secrets after them, so renaming one orphans what is
// stored under the old name and issues everything anew.
type ID string

// The certificate set of an instance, in Plan's order.
const (
	// IDCA is the instance's CA: it signs the API server's serving
	// certificate and every client certificate the API server accepts. The
	// user may supply it (customCertificate.apiServerCACert).
	IDCA ID = "ca"
	// IDEtcdCA signs etcd's certificates and the API server's etcd client
	// certificate, so that a certificate for the API server is never a key
	// to etcd.
	IDEtcdCA ID = "etcd-ca"
	// IDFrontProxyCA signs the certificate the API server presents when it
	// proxies a request to an aggregated API server.
	IDFrontProxyCA ID = "front-proxy-ca"

	IDAPIServer             ID = "apiserver"
	IDAPIServerEtcdClient   ID = "apiserver-etcd-client"
	IDEtcdServer            ID = "etcd-server"
	IDEtcdPeer              ID = "etcd-peer"
	IDFrontProxyClient      ID = "front-proxy-client"
	IDAdmin                 ID = "admin"
	IDKubeControllerManager ID = "kube-controller-manager"
	IDControllerManager     ID = "controller-manager"
	IDScheduler             ID = "scheduler"
	IDDescheduler           ID = "descheduler"
	IDWebhookClient         ID = "webhook-client"
	IDOperator              ID = "operator"
	IDWebhook               ID = "webhook"
	// IDAggregatedAPIServer is the aggregated API server's serving
	// certificate, which the API server verifies when it proxies
	// cluster.karmada.io requests there; IDAggregatedAPIServerClient is
	// its identity towards the API server.
	IDAggregatedAPIServer       ID = "aggregated-apiserver"
	IDAggregatedAPIServerClient ID = "aggregated-apiserver-client"
)

// The identities client certificates authenticate as. Each component has
// its own user so that RBAC can give it only what it needs; the controller
// writes those bindings in the new API server.
const (
	// AdminUser in MastersGroup is the admin kubeconfig's identity, the only
	// certificate with unconditional access.
	AdminUser    = "system:admin"
	MastersGroup = "system:masters"

	// KubeControllerManagerUser is bound by Kubernetes' own bootstrap RBAC
	// (ClusterRole system:kube-controller-manager).
	KubeControllerManagerUser = "system:kube-controller-manager"

	ControllerManagerUser = "system:flotilla:controller-manager"
	SchedulerUser         = "system:flotilla:scheduler"
	WebhookUser           = "system:flotilla:webhook"
	// DeschedulerUser is issued whether or not the instance runs the
	// descheduler (spec.components.karmadaDescheduler), as every other
	// identity is: turning the descheduler on or off then issues nothing
	// and rolls no other component's pods.
	DeschedulerUser = "system:flotilla:descheduler"
	// AggregatedAPIServerUser delegates authentication and authorization
	// to the API server, reads the members' Secrets the cluster proxy
	// needs and runs admission against the control plane's policies.
	AggregatedAPIServerUser = "system:flotilla:aggregated-apiserver"

	// OperatorUser in OperatorsGroup is the operator's own identity in the
	// API server it installs, used to create CRDs, RBAC and webhook
	// configurations. No built-in role grants it anything: the operator
	// first binds OperatorsGroup to cluster-admin with the admin
	// certificate, then does the rest as itself, so audit logs tell the
	// operator's writes from a person's.
	OperatorUser   = "system:flotilla:operator"
	OperatorsGroup = "system:flotilla:operators"

	// FrontProxyClientUser is the name aggregated API servers see the API
	// server as (--requestheader-allowed-names).
	FrontProxyClientUser = "front-proxy-client"

	// APIServerEtcdClientUser is the API server's name towards etcd.
	APIServerEtcdClientUser = "kube-apiserver-etcd-client"
)

// DefaultDNSDomain is the cluster DNS domain when Params has none.
const DefaultDNSDomain = "cluster.local"

// Params are what an instance's certificates depend on.
type Params struct {
	// Name and Namespace of the Karmada resource; the charts name every
	// Service after Name.
	Name      string
	Namespace string
	// DNSDomain of the host cluster; defaults to DefaultDNSDomain.
	DNSDomain string
	// ServiceSubnet is the API server's Service range; when valid, its first
	// address (the in-cluster "kubernetes" Service) is a SAN of the API server.
	// For a dual-stack range pass the primary (first) one.
	ServiceSubnet netip.Prefix
	// APIServerCertSANs are the user's extra API server SANs, DNS names or IPs.
	APIServerCertSANs []string
	// ServiceAddresses of the API server's Service on the host: NodePort
	// node addresses, LoadBalancer IPs or hostnames. They are known only
	// once the Service exists, so the API server certificate is reissued
	// when they appear or change.
	ServiceAddresses []string
	// ExternalEtcd is true when the user runs etcd; the set then has no etcd
	// certificates, since the user supplies the API server's etcd client
	// certificate and CA along with the endpoints.
	ExternalEtcd bool
	// EtcdReplicas is the number of local etcd members; defaults to 1.
	EtcdReplicas int32
	// EtcdServerCertSANs and EtcdPeerCertSANs are the user's extra SANs.
	EtcdServerCertSANs []string
	EtcdPeerCertSANs   []string
	// AggregatedAPIServerCertSANs are the user's extra SANs of the
	// aggregated API server's serving certificate.
	AggregatedAPIServerCertSANs []string
	// Algorithm of every key; defaults to ECDSAP256.
	Algorithm Algorithm
	// LeafValidity of every leaf certificate (leafCertValidityDays);
	// defaults to DefaultLeafValidity. CAs have DefaultCAValidity.
	LeafValidity time.Duration
}

// Spec is one certificate of the set.
type Spec struct {
	ID ID
	// Signer is the CA that signs the certificate; empty for a CA, which is
	// self-signed.
	Signer  ID
	Request Request
}

// IsCA tells a CA's spec from a leaf's.
func (s Spec) IsCA() bool { return s.Signer == "" }

// CAOptions turns a CA's spec into what NewCA takes.
func (s Spec) CAOptions() CAOptions {
	return CAOptions{
		CommonName:    s.Request.CommonName,
		Organizations: s.Request.Organizations,
		Validity:      s.Request.Validity,
		Algorithm:     s.Request.Algorithm,
	}
}

// Plan lists the certificates of one instance, CAs first, each CA before
// what it signs. The same Params always give the same list.
func Plan(p Params) []Spec {
	domain := p.DNSDomain
	if domain == "" {
		domain = DefaultDNSDomain
	}
	leafValidity := p.LeafValidity
	if leafValidity == 0 {
		leafValidity = DefaultLeafValidity
	}
	leaf := func(id, signer ID, cn string, orgs []string, usages Usage, sans ...[]string) Spec {
		var all []string
		for _, s := range sans {
			all = append(all, s...)
		}
		dns, ips := SplitSANs(all)
		return Spec{ID: id, Signer: signer, Request: Request{
			CommonName:    cn,
			Organizations: orgs,
			DNSNames:      dns,
			IPs:           ips,
			Usages:        usages,
			Validity:      leafValidity,
			Algorithm:     p.Algorithm,
		}}
	}
	ca := func(id ID, cn string) Spec {
		return Spec{ID: id, Request: Request{CommonName: cn, Validity: DefaultCAValidity, Algorithm: p.Algorithm}}
	}
	// serviceNames are the names a Service is reachable by from the host's
	// pods, shortest first.
	serviceNames := func(svc string) []string {
		return []string{svc, svc + "." + p.Namespace, svc + "." + p.Namespace + ".svc", svc + "." + p.Namespace + ".svc." + domain}
	}
	loopback := []string{"localhost", "127.0.0.1"}

	specs := []Spec{ca(IDCA, "flotilla-ca")}
	if !p.ExternalEtcd {
		specs = append(specs, ca(IDEtcdCA, "flotilla-etcd-ca"))
	}
	specs = append(specs, ca(IDFrontProxyCA, "flotilla-front-proxy-ca"))

	// Inside the instance, clients reach the API server as the "kubernetes"
	// Service of the default namespace; from the host, as its own Service.
	apiServerSANs := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + domain}
	apiServerSANs = append(apiServerSANs, serviceNames(p.Name+"-apiserver")...)
	apiServerSANs = append(apiServerSANs, loopback...)
	if ip, ok := firstAddress(p.ServiceSubnet); ok {
		apiServerSANs = append(apiServerSANs, ip.String())
	}
	specs = append(specs, leaf(IDAPIServer, IDCA, "kube-apiserver", nil, ServerAuth,
		apiServerSANs, p.APIServerCertSANs, p.ServiceAddresses))

	if !p.ExternalEtcd {
		// Members are the pods of a StatefulSet behind the headless Service
		// N-etcd; clients use the Service N-etcd-client.
		peers := p.Name + "-etcd"
		members := make([]string, 0, max(p.EtcdReplicas, 1)+1)
		for i := range max(p.EtcdReplicas, 1) {
			members = append(members, fmt.Sprintf("%s-%d.%s.%s.svc.%s", peers, i, peers, p.Namespace, domain))
		}
		members = append(members, fmt.Sprintf("*.%s.%s.svc.%s", peers, p.Namespace, domain))
		specs = append(specs,
			leaf(IDAPIServerEtcdClient, IDEtcdCA, APIServerEtcdClientUser, nil, ClientAuth),
			// etcd's gRPC gateway dials etcd itself with the serving
			// certificate, so it must also be a client certificate.
			leaf(IDEtcdServer, IDEtcdCA, "etcd-server", nil, ServerAuth|ClientAuth,
				serviceNames(p.Name+"-etcd-client"), members, loopback, p.EtcdServerCertSANs),
			// Members present the peer certificate both when they dial and
			// when they are dialled. etcd checks that a dialling member's
			// address is one its certificate names, which is why every
			// member's own name is listed and not only the wildcard.
			leaf(IDEtcdPeer, IDEtcdCA, "etcd-peer", nil, ServerAuth|ClientAuth,
				members, loopback, p.EtcdPeerCertSANs),
		)
	}

	return append(specs,
		leaf(IDFrontProxyClient, IDFrontProxyCA, FrontProxyClientUser, nil, ClientAuth),
		leaf(IDAdmin, IDCA, AdminUser, []string{MastersGroup}, ClientAuth),
		leaf(IDKubeControllerManager, IDCA, KubeControllerManagerUser, nil, ClientAuth),
		leaf(IDControllerManager, IDCA, ControllerManagerUser, nil, ClientAuth),
		leaf(IDScheduler, IDCA, SchedulerUser, nil, ClientAuth),
		leaf(IDDescheduler, IDCA, DeschedulerUser, nil, ClientAuth),
		leaf(IDWebhookClient, IDCA, WebhookUser, nil, ClientAuth),
		leaf(IDOperator, IDCA, OperatorUser, []string{OperatorsGroup}, ClientAuth),
		leaf(IDWebhook, IDCA, "flotilla-webhook", nil, ServerAuth, serviceNames(p.Name+"-webhook")),
		leaf(IDAggregatedAPIServerClient, IDCA, AggregatedAPIServerUser, nil, ClientAuth),
		// The API server dials the aggregated API server through the
		// control plane's Service karmada-system/karmada-aggregated-apiserver
		// (an ExternalName of the host's Service) and verifies the name
		// karmada-aggregated-apiserver.karmada-system.svc; pods of the host
		// reach it by its own Service's names.
		leaf(IDAggregatedAPIServer, IDCA, "karmada-aggregated-apiserver", nil, ServerAuth,
			[]string{"karmada-aggregated-apiserver.karmada-system.svc", "karmada-aggregated-apiserver.karmada-system.svc." + domain},
			serviceNames(p.Name+"-aggregated-apiserver"), loopback, p.AggregatedAPIServerCertSANs),
	)
}

// firstAddress is the first usable address of a subnet, the one the API
// server gives the "kubernetes" Service.
func firstAddress(subnet netip.Prefix) (netip.Addr, bool) {
	if !subnet.IsValid() {
		return netip.Addr{}, false
	}
	subnet = subnet.Masked()
	ip := subnet.Addr().Next()
	return ip, ip.IsValid() && subnet.Contains(ip)
}
