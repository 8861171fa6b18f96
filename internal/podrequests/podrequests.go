// Package podrequests computes what a pod asks of a node: its effective
// resource requests, as Kubernetes computes them (the semantics of
// PodRequests in k8s.io/component-helpers/resource, default options). The
// native interpreter, the Lua kube library and the cluster status summary
// all count requests here, so a workload is sized the same way wherever it
// is looked at.
package podrequests

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ForPod returns the effective requests of a pod as the API server stored
// it (defaulted):
//
//   - the app containers are summed, and the restartable init containers
//     (sidecars) added to them, since they run alongside;
//   - each ordinary init container runs alone next to the sidecars started
//     before it; the peak of those steps raises the sum, per resource;
//   - pod-level requests (spec.resources.requests) replace the result for
//     the resources they may name (cpu, memory, huge pages);
//   - the runtime overhead (spec.overhead) comes on top.
//
// The status of in-place resizes is not consulted: the spec is what is
// counted.
func ForPod(spec *corev1.PodSpec) corev1.ResourceList {
	return effective(fromSpec(spec), false).list()
}

// ForTemplate returns the effective requests of the pods a controller
// creates from a pod template. Templates are not defaulted like pods, so
// the pod defaulting of the API server comes first: a container's limit
// stands in for a request it leaves out, and when pod-level limits are set,
// a pod-level request left out defaults to what the containers request of
// cpu or memory, or else to the pod-level limit. Then ForPod applies.
func ForTemplate(spec *corev1.PodSpec) corev1.ResourceList {
	return effective(fromSpec(spec), true).list()
}

// pod holds what requests depend on, read from a PodSpec or from an
// unstructured one without converting the rest (a typed Container is large,
// and its other fields do not matter here).
type pod struct {
	containers, initContainers []container
	// requests and limits are the pod-level ones (spec.resources).
	requests, limits amounts
	overhead         amounts
}

type container struct {
	requests, limits amounts
	restartable      bool
}

func fromSpec(spec *corev1.PodSpec) *pod {
	p := &pod{overhead: fromList(spec.Overhead)}
	p.containers = make([]container, len(spec.Containers))
	for i := range spec.Containers {
		p.containers[i] = fromContainer(&spec.Containers[i])
	}
	p.initContainers = make([]container, len(spec.InitContainers))
	for i := range spec.InitContainers {
		p.initContainers[i] = fromContainer(&spec.InitContainers[i])
	}
	if spec.Resources != nil {
		p.requests, p.limits = fromList(spec.Resources.Requests), fromList(spec.Resources.Limits)
	}
	return p
}

func fromContainer(c *corev1.Container) container {
	return container{
		requests:    fromList(c.Resources.Requests),
		limits:      fromList(c.Resources.Limits),
		restartable: c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways,
	}
}

func effective(p *pod, template bool) amounts {
	total := make(amounts, 0, 4)
	var sidecars, peak, step amounts
	for i := range p.containers {
		p.containers[i].addTo(&total, template)
	}
	for i := range p.initContainers {
		c := &p.initContainers[i]
		if c.restartable {
			c.addTo(&total, template)
			c.addTo(&sidecars, template)
			peak.raiseAll(sidecars)
			continue
		}
		step = step[:0]
		step.addAll(sidecars)
		c.addTo(&step, template)
		peak.raiseAll(step)
	}
	total.raiseAll(peak)
	for _, x := range p.podLevelRequests(total, template) {
		if PodLevelResource(x.name) {
			total.set(x.name, x.q)
		}
	}
	total.addAll(p.overhead)
	return total
}

// addTo adds the container's requests to sum, with its limits filling the
// missing ones for a template.
func (c *container) addTo(sum *amounts, template bool) {
	sum.addAll(c.requests)
	if !template {
		return
	}
	for _, x := range c.limits {
		if !c.requests.has(x.name) {
			sum.add(x.name, x.q)
		}
	}
}

// podLevelRequests returns spec.resources.requests, defaulted for a
// template as the API server defaults a pod's: only when pod-level limits
// are set, cpu and memory from the containers' aggregate (containers) when
// they request them, then any supported resource from its pod-level limit.
// Huge pages cannot be overcommitted, so they never default from the
// containers.
func (p *pod) podLevelRequests(containers amounts, template bool) amounts {
	if !template || len(p.limits) == 0 {
		return p.requests
	}
	out := make(amounts, 0, len(p.requests)+len(p.limits))
	out = append(out, p.requests...)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if i := containers.index(name); i >= 0 && !out.has(name) {
			out = append(out, containers[i])
		}
	}
	for _, x := range p.limits {
		if !out.has(x.name) && PodLevelResource(x.name) {
			out = append(out, x)
		}
	}
	return out
}

// PodLevelResource tells whether pod-level resources may name the
// resource: cpu, memory and huge pages.
func PodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// Format writes requests the way Karmada's interpreter does, so results
// compare equal to Karmada's: CPU in millicores, memory, ephemeral storage
// and huge pages in binary units, other resources as decimal counts; zero
// and negative amounts are left out. It returns nil when nothing remains.
func Format(reqs corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range reqs {
		if f, ok := formatted(name, q); ok {
			if out == nil {
				out = make(corev1.ResourceList, len(reqs))
			}
			out[name] = f
		}
	}
	return out
}

func (a amounts) formatted() corev1.ResourceList {
	var out corev1.ResourceList
	for _, x := range a {
		if f, ok := formatted(x.name, x.q); ok {
			if out == nil {
				out = make(corev1.ResourceList, len(a))
			}
			out[x.name] = f
		}
	}
	return out
}

func formatted(name corev1.ResourceName, q resource.Quantity) (resource.Quantity, bool) {
	switch {
	case name == corev1.ResourceCPU:
		if q.MilliValue() <= 0 {
			return resource.Quantity{}, false
		}
		return *resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI), true
	case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage ||
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		if q.Value() <= 0 {
			return resource.Quantity{}, false
		}
		return *resource.NewQuantity(q.Value(), resource.BinarySI), true
	}
	if q.Value() <= 0 {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(q.Value(), resource.DecimalSI), true
}
