package native

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// podRequirements computes what one pod of spec needs from a node, the way
// the Kubernetes scheduler sees it: the resource request (see
// podResourceRequest), the node claim (node selector, tolerations, required
// node affinity) and the priority class. It returns nil when neither a
// request nor a node claim remains, as Karmada does.
func podRequirements(spec map[string]any, namespace string) (*workv1alpha2.ReplicaRequirements, error) {
	if spec == nil {
		return nil, nil
	}
	claim, err := nodeClaim(spec)
	if err != nil {
		return nil, err
	}
	request, err := podResourceRequest(spec)
	if err != nil {
		return nil, err
	}
	if claim == nil && request == nil {
		return nil, nil
	}
	priority, err := nestedString(spec, "priorityClassName")
	if err != nil {
		return nil, err
	}
	return &workv1alpha2.ReplicaRequirements{
		NodeClaim:         claim,
		ResourceRequest:   request,
		Namespace:         namespace,
		PriorityClassName: priority,
	}, nil
}

func nodeClaim(spec map[string]any) (*workv1alpha2.NodeClaim, error) {
	selector, err := stringMap(spec["nodeSelector"], "nodeSelector")
	if err != nil {
		return nil, err
	}
	var tolerations []corev1.Toleration
	if v, ok := spec["tolerations"]; ok && v != nil {
		if err := fromUnstructured(v, &tolerations, "tolerations"); err != nil {
			return nil, err
		}
	}
	var hard *corev1.NodeSelector
	required, err := lookup(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
	if err != nil {
		return nil, err
	}
	if required != nil {
		hard = &corev1.NodeSelector{}
		if err := fromUnstructured(required, hard, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"); err != nil {
			return nil, err
		}
	}
	if len(selector) == 0 && len(tolerations) == 0 && hard == nil {
		return nil, nil
	}
	if len(selector) == 0 {
		selector = nil
	}
	return &workv1alpha2.NodeClaim{NodeSelector: selector, Tolerations: tolerations, HardNodeAffinity: hard}, nil
}

// podResourceRequest is the pod's effective request: the larger of the app
// containers plus restartable init containers (sidecars), and the peak of
// the init phase, where each init container runs next to the sidecars
// started before it. Pod-level requests (spec.resources) replace the
// aggregate for the resources they name; overhead is added on top. A
// container's limit stands in for a missing request, as API defaulting
// does. Quantities are written as Karmada writes them.
func podResourceRequest(spec map[string]any) (corev1.ResourceList, error) {
	var total, sidecars, peak, one amounts
	containers, err := nestedSlice(spec, "containers")
	if err != nil {
		return nil, err
	}
	for i, c := range containers {
		if err := containerRequest(&total, c, "containers", i); err != nil {
			return nil, err
		}
	}
	inits, err := nestedSlice(spec, "initContainers")
	if err != nil {
		return nil, err
	}
	for i, c := range inits {
		one = one[:0]
		if err := containerRequest(&one, c, "initContainers", i); err != nil {
			return nil, err
		}
		policy, _ := c.(map[string]any)["restartPolicy"].(string)
		if policy == string(corev1.ContainerRestartPolicyAlways) {
			total.addAll(one)
			sidecars.addAll(one)
			peak.maxAll(sidecars)
			continue
		}
		one.addAll(sidecars)
		peak.maxAll(one)
	}
	total.maxAll(peak)
	if podLevel, err := nestedMap(spec, "resources"); err != nil {
		return nil, err
	} else if podLevel != nil {
		var pod amounts
		if err := requestOf(&pod, podLevel); err != nil {
			return nil, fmt.Errorf("resources.%w", err)
		}
		for _, a := range pod {
			if a.name == corev1.ResourceCPU || a.name == corev1.ResourceMemory || strings.HasPrefix(string(a.name), corev1.ResourceHugePagesPrefix) {
				total.set(a.name, a.q)
			}
		}
	}
	if overhead, ok := spec["overhead"]; ok && overhead != nil {
		m, ok := overhead.(map[string]any)
		if !ok {
			return nil, fieldError("overhead", "an object", overhead)
		}
		for name, raw := range m {
			q, err := quantity(raw)
			if err != nil {
				return nil, fmt.Errorf("overhead.%s: %w", name, err)
			}
			total.add(corev1.ResourceName(name), q)
		}
	}
	return formatRequest(total), nil
}

func containerRequest(dst *amounts, c any, list string, i int) error {
	m, ok := c.(map[string]any)
	if !ok {
		return fieldError(fmt.Sprintf("%s[%d]", list, i), "an object", c)
	}
	res, ok := m["resources"].(map[string]any)
	if !ok {
		if m["resources"] != nil {
			return fieldError(fmt.Sprintf("%s[%d].resources", list, i), "an object", m["resources"])
		}
		return nil
	}
	if err := requestOf(dst, res); err != nil {
		return fmt.Errorf("%s[%d].resources.%w", list, i, err)
	}
	return nil
}

// requestOf adds a container's requests to dst, with limits filling the
// resources requests leave out (limits are parsed only then). Errors name
// the field below resources ("requests.cpu: ...").
func requestOf(dst *amounts, res map[string]any) error {
	requests, err := quantityMap(res["requests"], "requests")
	if err != nil {
		return err
	}
	limits, err := quantityMap(res["limits"], "limits")
	if err != nil {
		return err
	}
	for name, raw := range requests {
		q, err := quantity(raw)
		if err != nil {
			return fmt.Errorf("requests.%s: %w", name, err)
		}
		dst.add(corev1.ResourceName(name), q)
	}
	for name, raw := range limits {
		if _, ok := requests[name]; ok {
			continue
		}
		q, err := quantity(raw)
		if err != nil {
			return fmt.Errorf("limits.%s: %w", name, err)
		}
		dst.add(corev1.ResourceName(name), q)
	}
	return nil
}

func quantityMap(v any, field string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fieldError(field, "an object", v)
	}
	return m, nil
}

func quantity(raw any) (resource.Quantity, error) {
	switch x := raw.(type) {
	case string:
		return resource.ParseQuantity(x)
	case float64:
		if n, ok := toInt64(x); ok {
			return *resource.NewQuantity(n, resource.DecimalSI), nil
		}
		return resource.ParseQuantity(strconv.FormatFloat(x, 'f', -1, 64))
	}
	if n, ok := toInt64(raw); ok {
		return *resource.NewQuantity(n, resource.DecimalSI), nil
	}
	return resource.Quantity{}, fmt.Errorf("expected a quantity, got %T", raw)
}

// amounts accumulate quantities by resource; pods name a handful of
// resources, so a slice beats a map.
type amounts []amount

type amount struct {
	name corev1.ResourceName
	q    resource.Quantity
}

func (a *amounts) find(name corev1.ResourceName) int {
	for i := range *a {
		if (*a)[i].name == name {
			return i
		}
	}
	return -1
}

func (a *amounts) add(name corev1.ResourceName, q resource.Quantity) {
	if i := a.find(name); i >= 0 {
		(*a)[i].q.Add(q)
		return
	}
	*a = append(*a, amount{name, q.DeepCopy()})
}

func (a *amounts) set(name corev1.ResourceName, q resource.Quantity) {
	if i := a.find(name); i >= 0 {
		(*a)[i].q = q.DeepCopy()
		return
	}
	*a = append(*a, amount{name, q.DeepCopy()})
}

func (a *amounts) addAll(b amounts) {
	for _, x := range b {
		a.add(x.name, x.q)
	}
}

func (a *amounts) maxAll(b amounts) {
	for _, x := range b {
		if i := a.find(x.name); i < 0 {
			*a = append(*a, amount{x.name, x.q.DeepCopy()})
		} else if x.q.Cmp((*a)[i].q) > 0 {
			(*a)[i].q = x.q.DeepCopy()
		}
	}
}

// formatRequest writes CPU in millicores, byte resources in binary units
// and counts in decimal, dropping zeros: what Karmada's interpreter and the
// kube Lua library produce, so that native and Lua answers compare equal.
func formatRequest(total amounts) corev1.ResourceList {
	var out corev1.ResourceList
	for _, a := range total {
		name, q := a.name, a.q
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
			out = make(corev1.ResourceList, len(total))
		}
		out[name] = f
	}
	return out
}
