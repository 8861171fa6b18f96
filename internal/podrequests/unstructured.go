package podrequests

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TemplateFromUnstructured returns ForTemplate of an unstructured pod
// spec, reading only the fields requests depend on (containers' and init
// containers' resources and restart policy, spec.resources, spec.overhead);
// that is much cheaper than converting the whole spec. A field of the wrong
// type is an error naming its path below the spec
// ("containers[0].resources.requests.cpu: ...").
func TemplateFromUnstructured(spec map[string]any) (corev1.ResourceList, error) {
	p, err := fromUnstructured(spec)
	if err != nil {
		return nil, err
	}
	return effective(p, true), nil
}

func fromUnstructured(spec map[string]any) (*pod, error) {
	p := &pod{}
	if spec == nil {
		return p, nil
	}
	var err error
	if p.containers, err = containers(spec, "containers"); err != nil {
		return nil, err
	}
	if p.initContainers, err = containers(spec, "initContainers"); err != nil {
		return nil, err
	}
	if v := spec["resources"]; v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, wrongType("resources", "an object", v)
		}
		if p.requests, p.limits, err = requirements(m, "resources"); err != nil {
			return nil, err
		}
	}
	if p.overhead, err = resourceList(spec["overhead"], "overhead"); err != nil {
		return nil, err
	}
	return p, nil
}

func containers(spec map[string]any, field string) ([]container, error) {
	v := spec[field]
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, wrongType(field, "a list", v)
	}
	out := make([]container, len(list))
	for i, e := range list {
		c, ok := e.(map[string]any)
		if !ok {
			return nil, wrongType(fmt.Sprintf("%s[%d]", field, i), "an object", e)
		}
		out[i].restartable = c["restartPolicy"] == string(corev1.ContainerRestartPolicyAlways)
		r := c["resources"]
		if r == nil {
			continue
		}
		rm, ok := r.(map[string]any)
		if !ok {
			return nil, wrongType(fmt.Sprintf("%s[%d].resources", field, i), "an object", r)
		}
		var err error
		if out[i].requests, out[i].limits, err = requirements(rm, fmt.Sprintf("%s[%d].resources", field, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func requirements(r map[string]any, path string) (requests, limits corev1.ResourceList, err error) {
	if requests, err = resourceList(r["requests"], path+".requests"); err != nil {
		return nil, nil, err
	}
	limits, err = resourceList(r["limits"], path+".limits")
	return requests, limits, err
}

func resourceList(v any, path string) (corev1.ResourceList, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(path, "an object", v)
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(m))
	for name, raw := range m {
		q, err := Quantity(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", path, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// Quantity parses what JSON or a Lua script gives for a quantity: a
// string, or a number.
func Quantity(raw any) (resource.Quantity, error) {
	switch x := raw.(type) {
	case string:
		return resource.ParseQuantity(x)
	case int64:
		return *resource.NewQuantity(x, resource.DecimalSI), nil
	case int:
		return *resource.NewQuantity(int64(x), resource.DecimalSI), nil
	case int32:
		return *resource.NewQuantity(int64(x), resource.DecimalSI), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return *resource.NewQuantity(int64(x), resource.DecimalSI), nil
		}
		return resource.ParseQuantity(strconv.FormatFloat(x, 'f', -1, 64))
	case json.Number:
		return resource.ParseQuantity(x.String())
	}
	return resource.Quantity{}, fmt.Errorf("expected a quantity, got %T", raw)
}

func wrongType(path, want string, got any) error {
	return fmt.Errorf("%s: expected %s, got %T", path, want, got)
}
