package localfed

import (
	"crypto/ecdsa"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster is one API server of the federation: the control plane, the host
// or a member.
type Cluster struct {
	// Name is the cluster's name and its kubeconfig context: karmada-apiserver,
	// host or memberN.
	Name string
	// Endpoint is the API server's URL, https://127.0.0.1:<port>.
	Endpoint string
	// CAData is the PEM CA that signed the API server's serving certificate.
	CAData []byte
	// Config authenticates as a member of system:masters. Copy it with
	// rest.CopyConfig before changing it.
	Config *rest.Config
	// Client is a controller-runtime client built from Config.
	Client client.Client
	// Pull: the member is registered in Pull mode by its agent.
	Pull bool

	dir        string // <WorkDir>/<Name>: certificates, keys, kubeconfigs
	ca         *certAuthority
	admin      keyPair
	apiserver  *process
	port       int
	etcdPrefix string
	// serviceCIDR is the Service range when it is not serviceClusterIPRange.
	serviceCIDR string
	// token authenticates as the member's cluster-admin ServiceAccount; it is
	// what the control plane's Secret for this member holds.
	token string
	// impersonatorToken authenticates as the member's impersonator.
	impersonatorToken string
	// kwokPort is where kwok serves as the nodes' kubelet (kwokkubelet.go)
	// and node metrics; metricsServerPort is where metrics-server serves,
	// with Options.Metrics. A restarted member keeps them, as its nodes and
	// registrations name them.
	kwokPort          int
	metricsServerPort int
}

// Files of a cluster's directory.
const (
	fileCA            = "ca.crt"
	fileCAKey         = "ca.key"
	fileServingCert   = "serving.crt"
	fileServingKey    = "serving.key"
	fileSAKey         = "service-account.key"
	fileSAPub         = "service-account.pub"
	identityAdmin     = "localfed-admin"
	groupSystemMaster = "system:masters"

	fileFrontProxyCA         = "front-proxy-ca.crt"
	fileFrontProxyClientCert = "front-proxy-client.crt"
	fileFrontProxyClientKey  = "front-proxy-client.key"
	frontProxyClientName     = "front-proxy-client"
)

// componentIdentity is the client certificate a process authenticates with.
// kube-controller-manager and kube-scheduler use the users that Kubernetes'
// bootstrap RBAC grants their roles, as kubeadm sets them up.
func componentIdentity(component string) (certRequest, bool) {
	switch component {
	case binKubeControllerManager:
		return certRequest{commonName: "system:kube-controller-manager"}, true
	case binKubeScheduler:
		return certRequest{commonName: "system:kube-scheduler"}, true
	case componentAggregated:
		// It reads members' Secrets, delegates authentication and
		// authorization, and runs admission with the control plane's
		// webhook configurations: cluster-admin in the local federation.
		return certRequest{commonName: "system:" + componentAggregated, organizations: []string{groupSystemMaster}}, true
	case componentWebhook:
		// It reads what it validates against (Clusters, quotas, interpreter
		// customizations) across namespaces: cluster-admin in the local
		// federation, as the in-process webhook is.
		return certRequest{commonName: "system:karmada-webhook", organizations: []string{groupSystemMaster}}, true
	case componentMetricsAdapter:
		// It reads Clusters and their Secrets and delegates authentication
		// and authorization: cluster-admin in the local federation.
		return certRequest{commonName: "system:" + componentMetricsAdapter, organizations: []string{groupSystemMaster}}, true
	case binMetricsServer:
		// It lists nodes and pods and delegates authentication and
		// authorization: cluster-admin in the local federation.
		return certRequest{commonName: "system:" + binMetricsServer, organizations: []string{groupSystemMaster}}, true
	case binKwok:
		// kwok plays a kubelet for every node and deletes pods: it needs more
		// than the node authorizer would let one kubelet do.
		return certRequest{commonName: "kwok", organizations: []string{groupSystemMaster}}, true
	}
	return certRequest{}, false
}

// newCluster makes the cluster's directory, CA, serving certificate,
// service-account key and the admin client certificate.
func newCluster(workDir, name string) (*Cluster, error) {
	c := &Cluster{Name: name, dir: filepath.Join(workDir, name), etcdPrefix: "/" + name}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating directory of %s: %w", name, err)
	}
	ca, err := newCertAuthority(name + "-ca")
	if err != nil {
		return nil, err
	}
	c.ca = ca
	c.CAData = ca.certPEM
	serving, err := ca.issue(certRequest{
		commonName: name,
		server:     true,
		ips:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	})
	if err != nil {
		return nil, err
	}
	c.admin, err = ca.issue(certRequest{commonName: identityAdmin, organizations: []string{groupSystemMaster}})
	if err != nil {
		return nil, err
	}
	caKey, err := encodePrivateKey(ca.key.(*ecdsa.PrivateKey))
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		return nil, err
	}
	// The front proxy is the API server itself calling aggregated API
	// servers (the cluster proxy, metrics) with the user in headers: a CA of
	// its own, so that no other client certificate can speak for a user.
	frontProxyCA, err := newCertAuthority(name + "-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	frontProxyClient, err := frontProxyCA.issue(certRequest{commonName: frontProxyClientName})
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		fileFrontProxyCA:         frontProxyCA.certPEM,
		fileFrontProxyClientCert: frontProxyClient.certPEM,
		fileFrontProxyClientKey:  frontProxyClient.keyPEM,
		fileCA:                   ca.certPEM,
		// kube-controller-manager signs approved client CSRs with the CA
		// (the agents' certificates).
		fileCAKey:       caKey,
		fileServingCert: serving.certPEM,
		fileServingKey:  serving.keyPEM,
		fileSAKey:       saKey,
		fileSAPub:       saPub,
	}
	for file, data := range files {
		if err := os.WriteFile(c.path(file), data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s of %s: %w", file, name, err)
		}
	}
	return c, nil
}

// path is the path of a file in the cluster's directory.
func (c *Cluster) path(file string) string { return filepath.Join(c.dir, file) }

// componentKubeconfig is the kubeconfig a component of this cluster uses.
func (c *Cluster) componentKubeconfig(component string) string {
	return c.path(component + ".kubeconfig")
}

// hostPort is the API server's address as host:port.
func (c *Cluster) hostPort() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }
