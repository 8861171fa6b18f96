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
	return effective(fromSpec(spec), false)
}

// ForTemplate returns the effective requests of the pods a controller
// creates from a pod template. Templates are not defaulted like pods, so
// the pod defaulting of the API server comes first: a container's limit
// stands in for a request it leaves out, and when pod-level limits are set,
// a pod-level request left out defaults to what the containers request of
// cpu or memory, or else to the pod-level limit. Then ForPod applies.
func ForTemplate(spec *corev1.PodSpec) corev1.ResourceList {
	return effective(fromSpec(spec), true)
}

// pod holds what requests depend on, read from a PodSpec or from an
// unstructured one without converting the rest (a typed Container is large,
// and its other fields do not matter here).
type pod struct {
	containers, initContainers []container
	// requests and limits are the pod-level ones (spec.resources).
	requests, limits corev1.ResourceList
	overhead         corev1.ResourceList
}

type container struct {
	requests, limits corev1.ResourceList
	restartable      bool
}

func fromSpec(spec *corev1.PodSpec) *pod {
	p := &pod{overhead: spec.Overhead}
	p.containers = make([]container, len(spec.Containers))
	for i := range spec.Containers {
		p.containers[i] = fromContainer(&spec.Containers[i])
	}
	p.initContainers = make([]container, len(spec.InitContainers))
	for i := range spec.InitContainers {
		p.initContainers[i] = fromContainer(&spec.InitContainers[i])
	}
	if spec.Resources != nil {
		p.requests, p.limits = spec.Resources.Requests, spec.Resources.Limits
	}
	return p
}

func fromContainer(c *corev1.Container) container {
	return container{
		requests:    c.Resources.Requests,
		limits:      c.Resources.Limits,
		restartable: c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways,
	}
}

func effective(p *pod, template bool) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for i := range p.containers {
		addTo(reqs, p.containers[i].effectiveRequests(template))
	}
	var sidecars, initPeak corev1.ResourceList
	for i := range p.initContainers {
		c := &p.initContainers[i]
		r := c.effectiveRequests(template)
		if c.restartable {
			addTo(reqs, r)
			if sidecars == nil {
				sidecars = corev1.ResourceList{}
			}
			addTo(sidecars, r)
			initPeak = raiseTo(initPeak, sidecars)
			continue
		}
		step := corev1.ResourceList{}
		addTo(step, r)
		addTo(step, sidecars)
		initPeak = raiseTo(initPeak, step)
	}
	raiseTo(reqs, initPeak)
	for name, q := range p.podLevelRequests(reqs, template) {
		if PodLevelResource(name) {
			reqs[name] = q.DeepCopy()
		}
	}
	addTo(reqs, p.overhead)
	return reqs
}

// effectiveRequests returns the container's requests, with its limits
// filling the missing ones for a template.
func (c *container) effectiveRequests(template bool) corev1.ResourceList {
	if !template || len(c.limits) == 0 {
		return c.requests
	}
	out := make(corev1.ResourceList, len(c.requests)+len(c.limits))
	for name, q := range c.limits {
		out[name] = q
	}
	for name, q := range c.requests {
		out[name] = q
	}
	return out
}

// podLevelRequests returns spec.resources.requests, defaulted for a
// template as the API server defaults a pod's: only when pod-level limits
// are set, cpu and memory from the containers' aggregate (containers) when
// they request them, then any supported resource from its pod-level limit.
// Huge pages cannot be overcommitted, so they never default from the
// containers.
func (p *pod) podLevelRequests(containers corev1.ResourceList, template bool) corev1.ResourceList {
	if !template || len(p.limits) == 0 {
		return p.requests
	}
	out := make(corev1.ResourceList, len(p.requests)+len(p.limits))
	for name, q := range p.requests {
		out[name] = q
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, set := out[name]; !set {
			if q, ok := containers[name]; ok {
				out[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range p.limits {
		if _, set := out[name]; !set && PodLevelResource(name) {
			out[name] = q
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

// addTo adds add into sum.
func addTo(sum, add corev1.ResourceList) {
	for name, q := range add {
		if cur, ok := sum[name]; ok {
			cur.Add(q)
			sum[name] = cur
		} else {
			sum[name] = q.DeepCopy()
		}
	}
}

// raiseTo raises each resource of into to at least that of other, making
// into when it is nil and other is not, and returns it.
func raiseTo(into, other corev1.ResourceList) corev1.ResourceList {
	if into == nil && len(other) > 0 {
		into = make(corev1.ResourceList, len(other))
	}
	for name, q := range other {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
	return into
}

// Format writes requests the way Karmada's interpreter does, so results
// compare equal to Karmada's: CPU in millicores, memory, ephemeral storage
// and huge pages in binary units, other resources as decimal counts; zero
// and negative amounts are left out. It returns nil when nothing remains.
func Format(reqs corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range reqs {
		var f resource.Quantity
		switch {
		case name == corev1.ResourceCPU:
			if q.MilliValue() <= 0 {
				continue
			}
			f = *resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI)
		case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage ||
			strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			if q.Value() <= 0 {
				continue
			}
			f = *resource.NewQuantity(q.Value(), resource.BinarySI)
		default:
			if q.Value() <= 0 {
				continue
			}
			f = *resource.NewQuantity(q.Value(), resource.DecimalSI)
		}
		if out == nil {
			out = make(corev1.ResourceList, len(reqs))
		}
		out[name] = f
	}
	return out
}
