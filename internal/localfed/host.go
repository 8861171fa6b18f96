package localfed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// HostName names the host cluster's kubeconfig context, cluster and user.
const HostName = "host"

// hostControllers are Kubernetes' default controllers but the three that
// publish Endpoints and EndpointSlices: the pods of the host get addresses in
// 127.0.0.0/8, which the validation of both kinds rejects, so those
// controllers would only retry failing writes. Whatever runs the host's pods
// finds a Service's endpoints from the pods themselves.
const hostControllers = "*,-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller"

// The host's Service range is a /16 of loopback addresses, 127.<n>.0.0/16
// with n from hostServiceBlockFirst on, so that something running the host's
// pods on this machine can listen on every ClusterIP as it is. The API server
// takes such a range. Federations running at the same time on one machine
// must not share a range, since both would listen on the same addresses: a
// federation claims its block by listening on hostBlockClaimPort of the
// block's last address, which ends with the federation's process.
const (
	hostServiceBlockFirst = 96
	hostServiceBlocks     = 32
	hostBlockClaimPort    = 64999
)

// Token is the bearer token of the member's cluster-admin ServiceAccount
// (karmada-cluster/<member>), which a control plane uses to reach the member.
// With NoControlPlane it is what a test gives the control plane it makes.
// It is empty for the control plane and the host.
func (c *Cluster) Token() string { return c.token }

// ServiceCIDR is the cluster's --service-cluster-ip-range.
func (c *Cluster) ServiceCIDR() string {
	if c.serviceCIDR != "" {
		return c.serviceCIDR
	}
	return serviceClusterIPRange
}

// newHostCluster makes the host cluster's files and claims a loopback Service
// range for it.
func (f *Federation) newHostCluster() (*Cluster, error) {
	c, err := newCluster(f.WorkDir, HostName)
	if err != nil {
		return nil, err
	}
	claim, cidr, err := claimLoopbackBlock(hostServiceBlockFirst, hostServiceBlocks)
	if err != nil {
		return nil, fmt.Errorf("choosing the host's Service range: %w", err)
	}
	f.hostClaim = claim
	c.serviceCIDR = cidr
	return c, nil
}

// startHost runs the host cluster: API server, kube-controller-manager with
// hostControllers and kube-scheduler. It has no nodes; a test brings its own.
func (f *Federation) startHost(ctx context.Context, c *Cluster) error {
	began := time.Now()
	if err := f.startAPIServer(ctx, c); err != nil {
		return err
	}
	if err := c.writeComponentKubeconfigs(binKubeControllerManager, binKubeScheduler); err != nil {
		return err
	}
	kcm, err := f.startControllerManager(ctx, c, hostControllers)
	if err != nil {
		return err
	}
	if err := f.startScheduler(ctx, c); err != nil {
		return err
	}
	if err := waitFor(ctx, c.Name+" kube-controller-manager", defaultServiceAccountExists(c), c.apiserver, kcm); err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("Host ready", "cluster", c.Name, "endpoint", c.Endpoint, "serviceCIDR", c.serviceCIDR, "elapsed", time.Since(began).Round(time.Millisecond))
	return nil
}

// clusters are the control plane, if any, the host, if any, and the members:
// the contexts of the kubeconfig, the first being current.
func (f *Federation) clusters() []*Cluster {
	var all []*Cluster
	for _, c := range []*Cluster{f.ControlPlane, f.Host} {
		if c != nil {
			all = append(all, c)
		}
	}
	return append(all, f.Members...)
}

// releaseHostClaim gives back the host's Service range.
func (f *Federation) releaseHostClaim() {
	if f.hostClaim != nil {
		_ = f.hostClaim.Close()
	}
}

// claimLoopbackBlock claims the first free block of 127.<n>.0.0/16, n from
// first to first+count-1, by listening on its last address; the block stays
// claimed until the listener closes or the process ends.
func claimLoopbackBlock(first, count int) (net.Listener, string, error) {
	for n := first; n < first+count; n++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.%d.255.254:%d", n, hostBlockClaimPort))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return l, fmt.Sprintf("127.%d.0.0/16", n), nil
	}
	return nil, "", fmt.Errorf("all of 127.%d.0.0/16 … 127.%d.0.0/16 are claimed by other federations", first, first+count-1)
}
