package localfed

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// adminQPS and adminBurst lift client-go's default of 5 and 10: tests and
// benchmarks create objects by the thousand, and the API server is local.
const (
	adminQPS   = 200
	adminBurst = 400
)

// adminConfig is the rest.Config of the cluster's admin.
func (c *Cluster) adminConfig() *rest.Config {
	return &rest.Config{
		Host: c.Endpoint,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.CAData,
			CertData: c.admin.certPEM,
			KeyData:  c.admin.keyPEM,
		},
		QPS:   adminQPS,
		Burst: adminBurst,
	}
}

// writeComponentKubeconfigs issues a client certificate for each component
// and writes its kubeconfig. The endpoint must be known.
func (c *Cluster) writeComponentKubeconfigs(components ...string) error {
	for _, component := range components {
		req, ok := componentIdentity(component)
		if !ok {
			return fmt.Errorf("no client identity for %s", component)
		}
		kp, err := c.ca.issue(req)
		if err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		addContext(cfg, c.Name, c.Endpoint, c.CAData, kp)
		cfg.CurrentContext = c.Name
		if err := clientcmd.WriteToFile(*cfg, c.componentKubeconfig(component)); err != nil {
			return fmt.Errorf("writing %s kubeconfig of %s: %w", component, c.Name, err)
		}
	}
	return nil
}

// writeKubeconfig writes one kubeconfig with a context, cluster and user per
// cluster, each named after the cluster, the first being current.
func writeKubeconfig(path string, clusters []*Cluster) error {
	cfg := clientcmdapi.NewConfig()
	for _, c := range clusters {
		addContext(cfg, c.Name, c.Endpoint, c.CAData, c.admin)
	}
	if len(clusters) > 0 {
		cfg.CurrentContext = clusters[0].Name
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating kubeconfig directory: %w", err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

func addContext(cfg *clientcmdapi.Config, name, endpoint string, caData []byte, kp keyPair) {
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: endpoint, CertificateAuthorityData: caData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
}
