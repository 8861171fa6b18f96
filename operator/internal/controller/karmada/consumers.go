package karmada

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// apiServerURL is where pods of the host cluster reach the instance's API
// server: its Service's DNS name.
func apiServerURL(instance, namespace, domain string) string {
	return fmt.Sprintf("https://%s.%s.svc.%s:%d", releaseName(instance, APIServer), namespace, domain, apiServerPort)
}

// kubeconfig renders a kubeconfig for one client certificate, in the shape
// Karmada's tooling writes (cluster, user and context named after the API
// server).
func kubeconfig(server string, caPEM []byte, pair certs.KeyPair, user string) ([]byte, error) {
	const name = "karmada-apiserver"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// externalEtcdClient is the user's client certificate for external etcd.
type externalEtcdClient struct {
	ca, cert, key []byte
}

// consumerSecrets composes the Secrets the charts mount from the
// instance's certificates: what each component needs and nothing more.
// The keys are the charts' contract (operator/charts/*/README.md).
func consumerSecrets(instance, namespace, domain string, p *pki, external *externalEtcdClient) (map[string]map[string][]byte, error) {
	ca := p.bundles[certs.IDCA]
	server := apiServerURL(instance, namespace, domain)
	out := map[string]map[string][]byte{}

	apiserver := map[string][]byte{
		keyCACert:                ca,
		"apiserver.crt":          p.pairs[certs.IDAPIServer].CertPEM,
		"apiserver.key":          p.pairs[certs.IDAPIServer].KeyPEM,
		"front-proxy-ca.crt":     p.bundles[certs.IDFrontProxyCA],
		"front-proxy-client.crt": p.pairs[certs.IDFrontProxyClient].CertPEM,
		"front-proxy-client.key": p.pairs[certs.IDFrontProxyClient].KeyPEM,
		keySAPub:                 p.sa.PublicPEM,
		keySAKey:                 p.sa.PrivatePEM,
	}
	// The aggregated API server reads and writes Clusters in the same etcd
	// as the API server, with the same client certificate, as in Karmada.
	aggregated := map[string][]byte{
		keyCACert:  ca,
		keyTLSCert: p.pairs[certs.IDAggregatedAPIServer].CertPEM,
		keyTLSKey:  p.pairs[certs.IDAggregatedAPIServer].KeyPEM,
	}
	if external != nil {
		apiserver["etcd-ca.crt"], apiserver["etcd-client.crt"], apiserver["etcd-client.key"] = external.ca, external.cert, external.key
	} else {
		etcdCA := p.bundles[certs.IDEtcdCA]
		apiserver["etcd-ca.crt"] = etcdCA
		apiserver["etcd-client.crt"] = p.pairs[certs.IDAPIServerEtcdClient].CertPEM
		apiserver["etcd-client.key"] = p.pairs[certs.IDAPIServerEtcdClient].KeyPEM
		out[certSecretName(instance, Etcd)] = map[string][]byte{
			keyCACert:    etcdCA,
			"server.crt": p.pairs[certs.IDEtcdServer].CertPEM,
			"server.key": p.pairs[certs.IDEtcdServer].KeyPEM,
			"peer.crt":   p.pairs[certs.IDEtcdPeer].CertPEM,
			"peer.key":   p.pairs[certs.IDEtcdPeer].KeyPEM,
		}
	}
	out[certSecretName(instance, APIServer)] = apiserver
	for _, key := range []string{"etcd-ca.crt", "etcd-client.crt", "etcd-client.key"} {
		aggregated[key] = apiserver[key]
	}
	out[certSecretName(instance, AggregatedAPIServer)] = aggregated

	// kube-controller-manager signs service-account tokens and, with the
	// CA's key, certificate signing requests.
	kcm := map[string][]byte{keyCACert: ca, keySAKey: p.sa.PrivatePEM}
	// With cert-manager issuing, the CA's key stays with the issuer and
	// the control plane signs no certificate requests itself.
	if ca := p.cas[certs.IDCA]; ca != nil {
		kcm[keyCAKey] = ca.KeyPair().KeyPEM
	}
	out[certSecretName(instance, KubeControllerManager)] = kcm

	out[certSecretName(instance, Webhook)] = map[string][]byte{
		keyCACert:  ca,
		keyTLSCert: p.pairs[certs.IDWebhook].CertPEM,
		keyTLSKey:  p.pairs[certs.IDWebhook].KeyPEM,
	}

	clients := []struct {
		secret string
		id     certs.ID
		user   string
	}{
		{kubeconfigSecretName(instance, KubeControllerManager), certs.IDKubeControllerManager, certs.KubeControllerManagerUser},
		{kubeconfigSecretName(instance, ControllerManager), certs.IDControllerManager, certs.ControllerManagerUser},
		{kubeconfigSecretName(instance, Scheduler), certs.IDScheduler, certs.SchedulerUser},
		{kubeconfigSecretName(instance, Descheduler), certs.IDDescheduler, certs.DeschedulerUser},
		{kubeconfigSecretName(instance, Webhook), certs.IDWebhookClient, certs.WebhookUser},
		{kubeconfigSecretName(instance, AggregatedAPIServer), certs.IDAggregatedAPIServerClient, certs.AggregatedAPIServerUser},
		{adminKubeconfigSecretName(instance), certs.IDAdmin, certs.AdminUser},
	}
	for _, c := range clients {
		pair := p.pairs[c.id]
		cfg, err := kubeconfig(server, ca, pair, c.user)
		if err != nil {
			return nil, fmt.Errorf("rendering kubeconfig of %s: %w", c.id, err)
		}
		out[c.secret] = map[string][]byte{keyKubeconfig: cfg, keyCACert: ca, keyTLSCert: pair.CertPEM, keyTLSKey: pair.KeyPEM}
	}
	return out, nil
}

// certificateHashes is, per component, a digest of every Secret its pods
// mount, for the pod-template annotation that rolls them on a change.
func certificateHashes(instance string, secrets map[string]map[string][]byte) map[Component]string {
	mounts := map[Component][]string{
		Etcd:                  {certSecretName(instance, Etcd)},
		APIServer:             {certSecretName(instance, APIServer)},
		AggregatedAPIServer:   {certSecretName(instance, AggregatedAPIServer), kubeconfigSecretName(instance, AggregatedAPIServer)},
		KubeControllerManager: {certSecretName(instance, KubeControllerManager), kubeconfigSecretName(instance, KubeControllerManager)},
		ControllerManager:     {kubeconfigSecretName(instance, ControllerManager)},
		Scheduler:             {kubeconfigSecretName(instance, Scheduler)},
		Descheduler:           {kubeconfigSecretName(instance, Descheduler)},
		Webhook:               {certSecretName(instance, Webhook), kubeconfigSecretName(instance, Webhook)},
	}
	out := map[Component]string{}
	for c, names := range mounts {
		var pems [][]byte
		for _, name := range names {
			data := secrets[name]
			for _, key := range sortedKeys(data) {
				pems = append(pems, []byte(key), data[key])
			}
		}
		out[c] = certs.Hash(pems...)
	}
	return out
}
