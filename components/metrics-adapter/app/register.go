package app

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/internal/apiservice"
)

// ServiceName is the adapter's Service, Karmada's name.
const ServiceName = "karmada-metrics-adapter"

// GroupVersions are the APIServices that point at the adapter, with
// Karmada's priorities: v1beta1.metrics.k8s.io, v1beta2 and
// v1beta1.custom.metrics.k8s.io.
var GroupVersions = []apiservice.GroupVersion{
	{Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 200},
	{Group: "custom.metrics.k8s.io", Version: "v1beta2", GroupPriorityMinimum: 100, VersionPriority: 200},
	{Group: "custom.metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100},
}

// Registration says where the control plane reaches the adapter.
type Registration struct {
	// Namespace of the Service; karmada-system by default.
	Namespace string
	// ExternalName, when set, makes the Service an ExternalName Service
	// of that host (an adapter outside the control plane's cluster
	// network, such as the local federation's); otherwise the Service
	// must exist.
	ExternalName string
	// Port is the Service's port: the adapter's secure port.
	Port int32
	// CABundle verifies the adapter's serving certificate.
	CABundle []byte
}

// Register points the APIServices at the adapter and returns once the
// control plane finds them available.
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	return apiservice.Register(ctx, cfg, apiservice.Registration{
		ServiceName:   ServiceName,
		Namespace:     reg.Namespace,
		ExternalName:  reg.ExternalName,
		Port:          reg.Port,
		CABundle:      reg.CABundle,
		GroupVersions: GroupVersions,
	})
}
