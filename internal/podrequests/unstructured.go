package podrequests

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// SpecFromUnstructured reads the fields of an unstructured pod spec that
// requests depend on (containers' and init containers' resources and
// restart policy, spec.resources, spec.overhead) into a PodSpec; reading
// only these is much cheaper than converting the whole spec. A field of the
// wrong type is an error naming its path below the spec
// ("containers[0].resources.requests.cpu: ...").
func SpecFromUnstructured(spec map[string]any) (*corev1.PodSpec, error) {
	typed := &corev1.PodSpec{}
	if spec == nil {
		return typed, nil
	}
	var err error
	if typed.Containers, err = containers(spec, "containers"); err != nil {
		return nil, err
	}
	if typed.InitContainers, err = containers(spec, "initContainers"); err != nil {
		return nil, err
	}
	if v := spec["resources"]; v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, wrongType("resources", "an object", v)
		}
		typed.Resources = &corev1.ResourceRequirements{}
		if err := requirements(m, typed.Resources, "resources"); err != nil {
			return nil, err
		}
	}
	if typed.Overhead, err = resourceList(spec["overhead"], "overhead"); err != nil {
		return nil, err
	}
	return typed, nil
}

func containers(spec map[string]any, field string) ([]corev1.Container, error) {
	v := spec[field]
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, wrongType(field, "a list", v)
	}
	out := make([]corev1.Container, len(list))
	for i, e := range list {
		path := fmt.Sprintf("%s[%d]", field, i)
		c, ok := e.(map[string]any)
		if !ok {
			return nil, wrongType(path, "an object", e)
		}
		if p, ok := c["restartPolicy"].(string); ok {
			policy := corev1.ContainerRestartPolicy(p)
			out[i].RestartPolicy = &policy
		}
		r := c["resources"]
		if r == nil {
			continue
		}
		rm, ok := r.(map[string]any)
		if !ok {
			return nil, wrongType(path+".resources", "an object", r)
		}
		if err := requirements(rm, &out[i].Resources, path+".resources"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func requirements(r map[string]any, out *corev1.ResourceRequirements, path string) error {
	var err error
	if out.Requests, err = resourceList(r["requests"], path+".requests"); err != nil {
		return err
	}
	out.Limits, err = resourceList(r["limits"], path+".limits")
	return err
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
