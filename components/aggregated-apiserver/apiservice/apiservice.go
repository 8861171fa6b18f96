// Package apiservice registers the aggregated API server in the control
// plane: the APIService v1alpha1.cluster.karmada.io and, when asked, its
// Service, with Karmada's names and priorities (internal/apiservice does
// the work). It imports nothing of the server itself, so that the operator
// and the local federation register it without linking the server's
// generated code.
package apiservice

import (
	"context"

	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/apiservice"
)

// Karmada's names and priorities for the served group-version.
const (
	APIServiceName       = "v1alpha1.cluster.karmada.io"
	ServiceName          = "karmada-aggregated-apiserver"
	GroupPriorityMinimum = 2000
	VersionPriority      = 10
)

// Registration says where the control plane reaches the server.
type Registration struct {
	// Namespace of the Service; karmada-system by default.
	Namespace string
	// ExternalName, when set, makes the Service an ExternalName Service
	// of that host (a server outside the control plane's cluster network,
	// such as the local federation's); otherwise the Service must exist.
	ExternalName string
	// Port is the Service's port: the server's secure port.
	Port int32
	// CABundle verifies the server's serving certificate.
	CABundle []byte
}

func (reg Registration) shared() apiservice.Registration {
	return apiservice.Registration{
		ServiceName:  ServiceName,
		Namespace:    reg.Namespace,
		ExternalName: reg.ExternalName,
		Port:         reg.Port,
		CABundle:     reg.CABundle,
		GroupVersions: []apiservice.GroupVersion{{
			Group:                clusterv1alpha1.GroupVersion.Group,
			Version:              clusterv1alpha1.GroupVersion.Version,
			GroupPriorityMinimum: GroupPriorityMinimum,
			VersionPriority:      VersionPriority,
		}},
	}
}

// Register points cluster.karmada.io/v1alpha1 at the server: its Service
// when asked, and the APIService. An APIService the API server made for
// the Cluster CRD is taken over, which is the whole migration: Clusters
// stay where they are in etcd and are served from here from then on.
// It returns once the API server finds the server available.
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	return apiservice.Register(ctx, cfg, reg.shared())
}

// Apply writes the registration without waiting for the API server to use
// it, for callers that come back later rather than block, such as a
// reconciler.
func Apply(ctx context.Context, cfg *rest.Config, reg Registration) error {
	return apiservice.Apply(ctx, cfg, reg.shared())
}

// Available reports whether the API server sends
// cluster.karmada.io/v1alpha1 to the server and finds it answering; when
// not, the message says why.
func Available(ctx context.Context, cfg *rest.Config) (bool, string, error) {
	return apiservice.Available(ctx, cfg, APIServiceName)
}
