// Package imagebuild assembles the OCI images of Flotilla's components in Go,
// without a container engine: each image is one layer holding the component's
// static binary, on an empty base, run as a non-root user. Images are written
// as an OCI image layout and a `docker load`-able tarball, and pushed to a
// registry with the same library (go-containerregistry).
//
// Names and tags come from internal/release, which the operator's version
// table also reads, so the images built here are the ones the operator
// deploys.
package imagebuild

import (
	"fmt"

	"github.com/flotilla-io/flotilla/internal/release"
)

// Module is the Go module the components' main packages belong to.
const Module = "github.com/flotilla-io/flotilla"

// Components returns the components whose images this repository builds, in
// the order they are built and listed.
func Components() []release.Component {
	return []release.Component{
		release.Operator,
		release.ControllerManager,
		release.Scheduler,
		release.Descheduler,
		release.SchedulerEstimator,
		release.Webhook,
		release.AggregatedAPIServer,
		release.Agent,
		release.Flotillactl,
	}
}

// MainPackage returns the import path of the main package that is c's binary.
func MainPackage(c release.Component) (string, error) {
	switch c {
	case release.Operator:
		return Module + "/operator/cmd", nil
	case release.ControllerManager, release.Scheduler, release.Descheduler, release.SchedulerEstimator, release.Webhook, release.AggregatedAPIServer, release.Agent:
		return Module + "/components/" + string(c) + "/cmd", nil
	case release.Flotillactl:
		return Module + "/cmd/flotillactl", nil
	}
	return "", fmt.Errorf("no image is built for component %q", c)
}

// description is the org.opencontainers.image.description of c's image.
func description(c release.Component) string {
	switch c {
	case release.Operator:
		return "Flotilla operator: turns each operator.karmada.io Karmada resource into a multi-cluster control plane."
	case release.ControllerManager:
		return "Flotilla controller-manager: propagates resource templates to member clusters and aggregates their status."
	case release.Scheduler:
		return "Flotilla scheduler: places ResourceBindings and ClusterResourceBindings onto member clusters."
	case release.Descheduler:
		return "Flotilla descheduler: moves replicas of dynamically weighted Deployments off clusters that cannot schedule them."
	case release.SchedulerEstimator:
		return "Flotilla scheduler estimator: runs beside a member cluster and answers how many replicas fit there, over Karmada's estimator gRPC API."
	case release.Webhook:
		return "Flotilla admission webhook: defaulting and validation of the Karmada API's objects."
	case release.AggregatedAPIServer:
		return "Flotilla aggregated API server: serves cluster.karmada.io Clusters and the clusters/proxy subresource behind the control plane's API server."
	case release.Agent:
		return "Flotilla agent: runs in a Pull member cluster, registers it, and applies its Works from the control plane."
	case release.Flotillactl:
		return "flotillactl: Flotilla's command line."
	}
	return "Flotilla " + string(c)
}
