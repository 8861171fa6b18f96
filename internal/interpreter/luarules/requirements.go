package luarules

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// requirementsFrom converts the requires table GetReplicas returns. The
// common parts (resource requests, node selector, names) are read
// directly, which is several times faster than the reflective converter;
// tolerations and node affinity, rarer, go through it. Unknown fields are
// ignored, fields of the wrong type are errors.
func requirementsFrom(m map[string]any) (*workv1alpha2.ReplicaRequirements, error) {
	r := &workv1alpha2.ReplicaRequirements{}
	for k, v := range m {
		var err error
		switch k {
		case "resourceRequest":
			r.ResourceRequest, err = resourceList(v, k)
		case "nodeClaim":
			r.NodeClaim, err = nodeClaim(v)
		case "namespace":
			r.Namespace, err = str(v, k)
		case "priorityClassName":
			r.PriorityClassName, err = str(v, k)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func str(v any, path string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: expected a string, got %T", path, v)
	}
	return s, nil
}

func resourceList(v any, path string) (corev1.ResourceList, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected an object, got %T", path, v)
	}
	out := make(corev1.ResourceList, len(m))
	for name, raw := range m {
		var q resource.Quantity
		var err error
		switch x := raw.(type) {
		case string:
			q, err = resource.ParseQuantity(x)
		case int64:
			q = *resource.NewQuantity(x, resource.DecimalSI)
		case float64:
			q, err = resource.ParseQuantity(strconv.FormatFloat(x, 'f', -1, 64))
		default:
			err = fmt.Errorf("expected a quantity, got %T", raw)
		}
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", path, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

func nodeClaim(v any) (*workv1alpha2.NodeClaim, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("nodeClaim: expected an object, got %T", v)
	}
	c := &workv1alpha2.NodeClaim{}
	for k, f := range m {
		switch k {
		case "nodeSelector":
			sel, ok := f.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("nodeClaim.nodeSelector: expected an object, got %T", f)
			}
			c.NodeSelector = make(map[string]string, len(sel))
			for key, val := range sel {
				s, ok := val.(string)
				if !ok {
					return nil, fmt.Errorf("nodeClaim.nodeSelector.%s: expected a string, got %T", key, val)
				}
				c.NodeSelector[key] = s
			}
		case "tolerations":
			data, err := json.Marshal(f)
			if err == nil {
				err = json.Unmarshal(data, &c.Tolerations)
			}
			if err != nil {
				return nil, fmt.Errorf("nodeClaim.tolerations: %w", err)
			}
		case "hardNodeAffinity":
			a, ok := f.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("nodeClaim.hardNodeAffinity: expected an object, got %T", f)
			}
			c.HardNodeAffinity = &corev1.NodeSelector{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(a, c.HardNodeAffinity); err != nil {
				return nil, fmt.Errorf("nodeClaim.hardNodeAffinity: %w", err)
			}
		}
	}
	return c, nil
}
