package lua

import (
	"fmt"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kubeAccuratePodRequirements returns what one replica of a pod template
// needs from a node:
//
//	{nodeClaim={nodeSelector=..., tolerations=..., hardNodeAffinity=...},
//	 resourceRequest={cpu="250m", memory="64Mi", ...}, priorityClassName=...}
//
// Empty parts are left out, and the result is nil when neither a node claim
// nor a resource request remains (as in Karmada).
func kubeAccuratePodRequirements(L *glua.LState) int {
	const fn = "kube.accuratePodRequirements"
	if L.GetTop() != 1 {
		L.RaiseError("%s: expected 1 argument (a pod template), got %d", fn, L.GetTop())
	}
	spec := templateSpec(L, fn, L.CheckTable(1))
	req, err := replicaRequirements(spec)
	if err != nil {
		L.RaiseError("%s: pod template spec.%v", fn, err)
	}
	if req == nil {
		L.Push(glua.LNil)
		return 1
	}
	lv, err := ToLua(L, req)
	if err != nil {
		L.RaiseError("%s: %v", fn, err)
	}
	L.Push(lv)
	return 1
}

// templateSpec returns tpl.spec as Go values. Untouched argument tables are
// read in place (shared, not copied): a template passed straight from the
// object costs no conversion.
func templateSpec(L *glua.LState, fn string, tpl *glua.LTable) map[string]any {
	v, _, cerr := decoder{share: true}.from(tpl, nil, 0)
	if cerr != nil {
		L.RaiseError("%s: pod template: %v", fn, cerr.toError())
	}
	tplMap, _ := v.(map[string]any)
	spec, _ := tplMap["spec"].(map[string]any)
	return spec
}

// replicaRequirements computes the requirements from an unstructured pod
// spec. Resources are parsed into typed quantities; the node claim parts are
// passed on as they are.
func replicaRequirements(spec map[string]any) (map[string]any, error) {
	typed, err := resourceSpec(spec)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	claim := map[string]any{}
	if m, ok := spec["nodeSelector"].(map[string]any); ok && len(m) > 0 {
		claim["nodeSelector"] = m
	}
	if l, ok := spec["tolerations"].([]any); ok && len(l) > 0 {
		claim["tolerations"] = l
	}
	if hard := nested(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"); hard != nil {
		claim["hardNodeAffinity"] = hard
	}
	if len(claim) > 0 {
		out["nodeClaim"] = claim
	}
	if reqs := formatRequests(podRequests(typed)); len(reqs) > 0 {
		rr := make(map[string]any, len(reqs))
		for name, q := range reqs {
			rr[string(name)] = q.String()
		}
		out["resourceRequest"] = rr
	}
	if len(out) == 0 {
		return nil, nil
	}
	if pc, ok := spec["priorityClassName"].(string); ok && pc != "" {
		out["priorityClassName"] = pc
	}
	return out, nil
}

func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// resourceSpec reads the fields of a pod spec that requests depend on into
// a typed PodSpec; converting only these is much cheaper than the whole spec.
func resourceSpec(spec map[string]any) (*corev1.PodSpec, error) {
	typed := &corev1.PodSpec{}
	var err error
	if typed.Overhead, err = resourceList(spec["overhead"]); err != nil {
		return nil, fmt.Errorf("overhead.%w", err)
	}
	if r, ok := spec["resources"].(map[string]any); ok {
		typed.Resources = &corev1.ResourceRequirements{}
		if err := resourceRequirements(r, typed.Resources); err != nil {
			return nil, fmt.Errorf("resources.%w", err)
		}
	}
	for _, name := range []string{"containers", "initContainers"} {
		list, _ := spec[name].([]any)
		containers := make([]corev1.Container, len(list))
		for i, c := range list {
			cm, _ := c.(map[string]any)
			if r, ok := cm["resources"].(map[string]any); ok {
				if err := resourceRequirements(r, &containers[i].Resources); err != nil {
					return nil, fmt.Errorf("%s[%d].resources.%w", name, i, err)
				}
			}
			if p, ok := cm["restartPolicy"].(string); ok {
				policy := corev1.ContainerRestartPolicy(p)
				containers[i].RestartPolicy = &policy
			}
		}
		if name == "containers" {
			typed.Containers = containers
		} else {
			typed.InitContainers = containers
		}
	}
	return typed, nil
}

func resourceRequirements(r map[string]any, out *corev1.ResourceRequirements) error {
	var err error
	if out.Requests, err = resourceList(r["requests"]); err != nil {
		return fmt.Errorf("requests.%w", err)
	}
	if out.Limits, err = resourceList(r["limits"]); err != nil {
		return fmt.Errorf("limits.%w", err)
	}
	return nil
}

// resourceList parses a map of quantities; errors start with the resource
// name, for the caller to prefix with the path.
func resourceList(v any) (corev1.ResourceList, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(m))
	for name, raw := range m {
		q, err := parseQuantity(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// parseQuantity accepts what JSON gives for a quantity: a string or a number.
func parseQuantity(v any) (resource.Quantity, error) {
	switch x := v.(type) {
	case string:
		return resource.ParseQuantity(x)
	case int64:
		return *resource.NewQuantity(x, resource.DecimalSI), nil
	case int:
		return *resource.NewQuantity(int64(x), resource.DecimalSI), nil
	case float64:
		return resource.ParseQuantity(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return resource.Quantity{}, fmt.Errorf("invalid quantity %v", v)
}

// podRequests is a pod's effective request as the Kubernetes scheduler
// computes it: the larger of (app containers + sidecars) and the peak of the
// init phase, where each init container runs next to the sidecars started
// before it; pod-level requests replace the aggregate for the resources they
// support; overhead is added on top. Requests default to limits, as the API
// server's defaulting does.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for i := range spec.Containers {
		addResources(reqs, containerRequests(&spec.Containers[i].Resources))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r := containerRequests(&c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(reqs, r)
			addResources(sidecars, r)
			maxResources(initPeak, sidecars)
			continue
		}
		during := corev1.ResourceList{}
		addResources(during, r)
		addResources(during, sidecars)
		maxResources(initPeak, during)
	}
	maxResources(reqs, initPeak)
	if spec.Resources != nil {
		for name, q := range containerRequests(spec.Resources) {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
				strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				reqs[name] = q.DeepCopy()
			}
		}
	}
	addResources(reqs, spec.Overhead)
	return reqs
}

// containerRequests returns requests with limits filling the missing ones.
func containerRequests(r *corev1.ResourceRequirements) corev1.ResourceList {
	if len(r.Limits) == 0 {
		return r.Requests
	}
	out := make(corev1.ResourceList, len(r.Requests)+len(r.Limits))
	for name, q := range r.Limits {
		out[name] = q
	}
	for name, q := range r.Requests {
		out[name] = q
	}
	return out
}

func addResources(dst, src corev1.ResourceList) {
	for name, q := range src {
		sum := dst[name].DeepCopy()
		sum.Add(q)
		dst[name] = sum
	}
}

func maxResources(dst, src corev1.ResourceList) {
	for name, q := range src {
		if cur, ok := dst[name]; !ok || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

// formatRequests writes quantities the way Karmada does (CPU in millicores,
// byte resources in binary units, counts in decimal) and drops zeros, so
// results match Karmada's golden outputs.
func formatRequests(reqs corev1.ResourceList) corev1.ResourceList {
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
			out = corev1.ResourceList{}
		}
		out[name] = f
	}
	return out
}
