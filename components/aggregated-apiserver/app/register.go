package app

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/apiservice"
)

// Karmada's names and priorities for the served group-version
// (package apiservice).
const (
	APIServiceName       = apiservice.APIServiceName
	ServiceName          = apiservice.ServiceName
	GroupPriorityMinimum = apiservice.GroupPriorityMinimum
	VersionPriority      = apiservice.VersionPriority
)

// Registration says where the control plane reaches the server.
type Registration = apiservice.Registration

// Register points cluster.karmada.io/v1alpha1 at the server and returns
// once the API server finds it available (apiservice.Register).
func Register(ctx context.Context, cfg *rest.Config, reg Registration) error {
	return apiservice.Register(ctx, cfg, reg)
}
