package localfed

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/kubernetes"
)

// serviceClusterIPRange is every cluster's Service range. No proxy runs, so
// these addresses are never reached; they only need to be valid.
const serviceClusterIPRange = "10.96.0.0/16"

// startAPIServer starts the cluster's kube-apiserver and waits until /readyz
// answers ok. It fills in the cluster's port, endpoint and admin config.
func (f *Federation) startAPIServer(ctx context.Context, c *Cluster) error {
	return retryPortRace(ctx, c.Name+" kube-apiserver", func() error {
		port, err := f.ports.next()
		if err != nil {
			return err
		}
		c.port = port
		c.Endpoint = "https://" + c.hostPort()
		c.Config = c.adminConfig()
		if err := f.newClient(c); err != nil {
			return err
		}
		p, err := f.sup.start(ctx, processSpec{
			cluster:   c.Name,
			component: binKubeAPIServer,
			binary:    filepath.Join(f.BinDir, binKubeAPIServer),
			args:      f.apiServerArgs(c),
			tier:      tierAPIServer,
		})
		if err != nil {
			return err
		}
		c.apiserver = p
		clientset, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			return fmt.Errorf("creating client of %s: %w", c.Name, err)
		}
		return waitFor(ctx, c.Name+" kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
			body, err := clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err != nil {
				return false, err
			}
			return string(body) == "ok", nil
		}, p)
	})
}

func (f *Federation) apiServerArgs(c *Cluster) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.port),
		"--cert-dir=" + c.dir,
		"--tls-cert-file=" + c.path(fileServingCert),
		"--tls-private-key-file=" + c.path(fileServingKey),
		"--client-ca-file=" + c.path(fileCA),
		"--etcd-servers=" + f.etcdURL,
		"--etcd-prefix=" + c.etcdPrefix,
		"--service-account-issuer=" + c.Endpoint,
		"--service-account-key-file=" + c.path(fileSAPub),
		"--service-account-signing-key-file=" + c.path(fileSAKey),
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// The endpoint reconciler would publish 127.0.0.1 as the kubernetes
		// Service's endpoint, which EndpointSlice validation rejects as loopback.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
}
