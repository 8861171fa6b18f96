package app

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/internal/clusterapi"
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

// Register points cluster.karmada.io/v1alpha1 at the server: its Service
// when asked, and the APIService. An APIService the API server made for
// the Cluster CRD is taken over, which is the whole migration: Clusters
// stay where they are in etcd and are served from here from then on.
// It returns once the API server finds the server available.
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	return apiservice.Register(ctx, cfg, apiservice.Registration{
		ServiceName:  ServiceName,
		Namespace:    reg.Namespace,
		ExternalName: reg.ExternalName,
		Port:         reg.Port,
		CABundle:     reg.CABundle,
		GroupVersions: []apiservice.GroupVersion{{
			Group:                clusterapi.GroupVersion.Group,
			Version:              clusterapi.GroupVersion.Version,
			GroupPriorityMinimum: GroupPriorityMinimum,
			VersionPriority:      VersionPriority,
		}},
	})
}
