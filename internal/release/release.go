// Package release names what a Flotilla release is made of: its version, the
// images of its components and where they come from. The image builder, the
// operator's version table and the charts' defaults read these, so an image
// name is written in one place.
package release

import "strings"

// Version is the Flotilla release this binary belongs to. Release builds set
// it with -ldflags "-X github.com/flotilla-io/flotilla/internal/release.Version=vX.Y.Z";
// other builds are the release in development.
var Version = "v0.1.0"

// DefaultRegistry is where Flotilla's own images are published.
const DefaultRegistry = "ghcr.io/flotilla-io"

// KubernetesRegistry is where the Kubernetes and etcd images come from.
const KubernetesRegistry = "registry.k8s.io"

// Component is one image of a release.
type Component string

// The components with images. Flotilla's own are built by this repository;
// the others are upstream Kubernetes and etcd images.
const (
	Operator              Component = "operator"
	ControllerManager     Component = "controller-manager"
	Scheduler             Component = "scheduler"
	Descheduler           Component = "descheduler"
	SchedulerEstimator    Component = "scheduler-estimator"
	Webhook               Component = "webhook"
	AggregatedAPIServer   Component = "aggregated-apiserver"
	Agent                 Component = "agent"
	Flotillactl           Component = "flotillactl"
	Etcd                  Component = "etcd"
	KubeAPIServer         Component = "kube-apiserver"
	KubeControllerManager Component = "kube-controller-manager"
)

// Own reports whether this repository builds the component's image.
func (c Component) Own() bool {
	switch c {
	case Etcd, KubeAPIServer, KubeControllerManager:
		return false
	}
	return true
}

// Binary is the name of the component's executable, which the image keeps
// at its root (Flotilla's) or on PATH (upstream's).
func (c Component) Binary() string {
	if c.Own() && c != Flotillactl {
		return "flotilla-" + string(c)
	}
	return string(c)
}

// Repository is the image repository of the component: under registry when
// one is given (a private mirror), else the default registry of its kind.
func (c Component) Repository(registry string) string {
	registry = strings.TrimSuffix(registry, "/")
	if registry == "" {
		registry = DefaultRegistry
		if !c.Own() {
			registry = KubernetesRegistry
		}
	}
	return registry + "/" + string(c)
}

// Image is the full reference of the component's image at tag.
func (c Component) Image(registry, tag string) string {
	return c.Repository(registry) + ":" + tag
}
