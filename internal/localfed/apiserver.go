package localfed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// serviceClusterIPRange is the Service range of the control plane and the
// members. No proxy runs, so these addresses are never reached; they only
// need to be valid. The host has a loopback range of its own (host.go).
const serviceClusterIPRange = "10.96.0.0/16"

// startAPIServer starts the cluster's kube-apiserver on a free port and waits
// until /readyz answers ok. It fills in the cluster's port, endpoint, admin
// config and client.
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
		return f.runAPIServer(ctx, c)
	})
}

// restartAPIServer starts the cluster's kube-apiserver again on the port,
// with the certificates and the etcd prefix it had, so that every credential
// issued for it and every object stored through it still hold.
func (f *Federation) restartAPIServer(ctx context.Context, c *Cluster) error {
	var err error
	for attempt := 1; attempt <= portRaceAttempts; attempt++ {
		err = f.runAPIServer(ctx, c)
		if err == nil || !errors.Is(err, errExited) || ctx.Err() != nil {
			return err
		}
		// The port cannot change: the Cluster registered in the control plane
		// names it. A socket of the previous server may linger a moment.
		log.FromContext(ctx).Info("kube-apiserver exited while restarting; retrying on the same port", "cluster", c.Name, "port", c.port, "attempt", attempt, "error", err.Error())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// runAPIServer starts kube-apiserver on c.port and waits until /readyz
// answers ok.
func (f *Federation) runAPIServer(ctx context.Context, c *Cluster) error {
	p, err := f.sup.start(ctx, processSpec{
		cluster:   c.Name,
		component: binKubeAPIServer,
		binary:    filepath.Join(f.BinDir, binKubeAPIServer),
		args:      f.apiServerArgs(c),
		env:       f.apiServerEnv(c),
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
}

func (f *Federation) apiServerArgs(c *Cluster) []string {
	args := f.baseAPIServerArgs(c)
	if c.Name == ControlPlaneName {
		args = append(args, f.opts.ControlPlaneAPIServerArgs...)
	}
	if f.Member(c.Name) != nil && !f.opts.APIServerOnlyMembers {
		args = append(args, c.kubeletClientArgs()...)
	}
	return args
}

func (f *Federation) apiServerEnv(c *Cluster) []string {
	if c.Name == ControlPlaneName {
		return f.opts.ControlPlaneAPIServerEnv
	}
	return nil
}

func (f *Federation) baseAPIServerArgs(c *Cluster) []string {
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
		"--service-cluster-ip-range=" + c.ServiceCIDR(),
		"--authorization-mode=RBAC",
		// Bootstrap tokens (kube-system/bootstrap-token-<id>) authenticate
		// members registering in Pull mode.
		"--enable-bootstrap-token-auth=true",
		"--allow-privileged=true",
		// The endpoint reconciler would publish 127.0.0.1 as the kubernetes
		// Service's endpoint, which EndpointSlice validation rejects as loopback.
		"--endpoint-reconciler-type=none",
		"--profiling=" + strconv.FormatBool(f.opts.Profiling),
		// Aggregated API servers (the control plane's cluster proxy) trust
		// the user the API server names in these headers, signed by the
		// front proxy's client certificate.
		"--requestheader-client-ca-file=" + c.path(fileFrontProxyCA),
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + c.path(fileFrontProxyClientCert),
		"--proxy-client-key-file=" + c.path(fileFrontProxyClientKey),
	}
}
