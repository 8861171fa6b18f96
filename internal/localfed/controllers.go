package localfed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controlPlaneControllers are the kube-controller-manager controllers a
// Karmada control plane runs: namespace deletion and owner-reference garbage
// collection, which templates, bindings and Works rely on, and the
// ServiceAccounts and tokens the federation's own components use, and the
// signing of approved client CSRs (Pull members' agents) and the removal of
// expired bootstrap tokens.
const controlPlaneControllers = "namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller," +
	"certificatesigningrequest-signing-controller,token-cleaner-controller"

// startControllerManager starts kube-controller-manager with the given
// controllers ("*" for Kubernetes' defaults).
func (f *Federation) startControllerManager(ctx context.Context, c *Cluster, controllers string) (*process, error) {
	return f.sup.start(ctx, processSpec{
		cluster:   c.Name,
		component: binKubeControllerManager,
		binary:    filepath.Join(f.BinDir, binKubeControllerManager),
		args: []string{
			"--kubeconfig=" + c.componentKubeconfig(binKubeControllerManager),
			// Nothing needs its metrics or health endpoints; readiness is seen
			// through the objects its controllers write.
			"--secure-port=0",
			"--leader-elect=false",
			"--controllers=" + controllers,
			// Each controller gets its own ServiceAccount and bootstrap role, as
			// kubeadm sets it up; the manager's own user may do little else.
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + c.path(fileSAKey),
			"--root-ca-file=" + c.path(fileCA),
			"--cluster-signing-cert-file=" + c.path(fileCA),
			"--cluster-signing-key-file=" + c.path(fileCAKey),
			// Deployments of many replicas in benchmarks should not wait on
			// client-side throttling at the default 20 QPS.
			"--kube-api-qps=100",
			"--kube-api-burst=200",
		},
		tier: tierClient,
	})
}

// startScheduler starts kube-scheduler, serving /readyz on a free port so its
// readiness can be seen.
func (f *Federation) startScheduler(ctx context.Context, c *Cluster) error {
	return retryPortRace(ctx, c.Name+" kube-scheduler", func() error {
		port, err := f.ports.next()
		if err != nil {
			return err
		}
		kubeconfig := c.componentKubeconfig(binKubeScheduler)
		p, err := f.sup.start(ctx, processSpec{
			cluster:   c.Name,
			component: binKubeScheduler,
			binary:    filepath.Join(f.BinDir, binKubeScheduler),
			args: []string{
				"--kubeconfig=" + kubeconfig,
				"--authentication-kubeconfig=" + kubeconfig,
				"--authorization-kubeconfig=" + kubeconfig,
				// Only the always-allowed /readyz is asked for: requests need
				// no front-proxy CA, which these API servers do not have.
				"--authentication-skip-lookup=true",
				"--bind-address=127.0.0.1",
				"--secure-port=" + strconv.Itoa(port),
				"--tls-cert-file=" + c.path(fileServingCert),
				"--tls-private-key-file=" + c.path(fileServingKey),
				"--leader-elect=false",
			},
			tier: tierClient,
		})
		if err != nil {
			return err
		}
		url := fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
		return waitFor(ctx, c.Name+" kube-scheduler /readyz", httpsOK(url, c.CAData), p)
	})
}

// httpsOK reports whether GET url answers 200 with a certificate signed by ca.
func httpsOK(url string, ca []byte) func(context.Context) (bool, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	httpClient := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
	}}
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return true, nil
	}
}

// defaultServiceAccountExists reports whether the serviceaccount controller
// has created the default namespace's ServiceAccount: the sign that
// kube-controller-manager runs, and what pods in that namespace need.
func defaultServiceAccountExists(c *Cluster) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceDefault, Name: "default"}, &corev1.ServiceAccount{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
}
