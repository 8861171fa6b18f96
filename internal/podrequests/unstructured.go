package podrequests

import (
	"encoding/json"
	"errors"
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
	return effective(&p, true).list(), nil
}

// parser reads quantities into one buffer that every list of the pod is a
// part of: one allocation for the lot instead of one per list. A list is
// never appended to once read, so a part stays valid when the buffer grows.
type parser struct {
	buf amounts
}

// FormattedTemplateFromUnstructured is Format(TemplateFromUnstructured(spec))
// without the list in between, for the interpreters, which answer every
// GetReplicas with it.
func FormattedTemplateFromUnstructured(spec map[string]any) (corev1.ResourceList, error) {
	p, err := fromUnstructured(spec)
	if err != nil {
		return nil, err
	}
	return effective(&p, true).formatted(), nil
}

// fromUnstructured returns the pod by value: it stays on the caller's stack.
func fromUnstructured(spec map[string]any) (pod, error) {
	var p pod
	if spec == nil {
		return p, nil
	}
	// Most pods name two resources in one or two containers.
	r := parser{buf: make(amounts, 0, 4)}
	var err error
	if p.containers, err = r.containers(spec["containers"]); err != nil {
		return pod{}, at("containers", err)
	}
	if p.initContainers, err = r.containers(spec["initContainers"]); err != nil {
		return pod{}, at("initContainers", err)
	}
	if v := spec["resources"]; v != nil {
		if p.requests, p.limits, err = r.requirements(v, true); err != nil {
			return pod{}, at("resources", err)
		}
	}
	if p.overhead, err = r.resourceList(spec["overhead"], nil); err != nil {
		return pod{}, at("overhead", err)
	}
	return p, nil
}

func (r *parser) containers(v any) ([]container, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, wrongType("a list", v)
	}
	out := make([]container, len(list))
	for i, e := range list {
		c, ok := e.(map[string]any)
		if !ok {
			return nil, at(index(i), wrongType("an object", e))
		}
		out[i].restartable = c["restartPolicy"] == string(corev1.ContainerRestartPolicyAlways)
		if res := c["resources"]; res != nil {
			var err error
			if out[i].requests, out[i].limits, err = r.requirements(res, false); err != nil {
				return nil, at(index(i), at("resources", err))
			}
		}
	}
	return out, nil
}

// requirements reads requests and limits. A container's limit matters only
// where it stands in for a missing request, so unless allLimits the limits
// of resources with a request are not read (parsing quantities is most of
// the cost of a GetReplicas).
func (r *parser) requirements(v any, allLimits bool) (requests, limits amounts, err error) {
	res, ok := v.(map[string]any)
	if !ok {
		return nil, nil, wrongType("an object", v)
	}
	if requests, err = r.resourceList(res["requests"], nil); err != nil {
		return nil, nil, at("requests", err)
	}
	skip := requests
	if allLimits {
		skip = nil
	}
	if limits, err = r.resourceList(res["limits"], skip); err != nil {
		return nil, nil, at("limits", err)
	}
	return requests, limits, nil
}

// resourceList reads a map of quantities, leaving out the resources skip
// names.
func (r *parser) resourceList(v any, skip amounts) (amounts, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType("an object", v)
	}
	if len(m) == 0 {
		return nil, nil
	}
	start := len(r.buf)
	for name, raw := range m {
		if skip.has(corev1.ResourceName(name)) {
			continue
		}
		q, err := Quantity(raw)
		if err != nil {
			return nil, at(name, err)
		}
		r.buf = append(r.buf, amount{corev1.ResourceName(name), q})
	}
	return r.buf[start:len(r.buf):len(r.buf)], nil
}

// fieldError is an error at a path below the pod spec, built from the
// inside out only when something is wrong ("containers[0].resources...").
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.err.Error()
	}
	return e.path + ": " + e.err.Error()
}

func (e *fieldError) Unwrap() error { return e.err }

// at puts err below the field or index seg ("[0]").
func at(seg string, err error) error {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return &fieldError{path: seg, err: err}
	}
	switch {
	case fe.path == "":
		fe.path = seg
	case fe.path[0] == '[':
		fe.path = seg + fe.path
	default:
		fe.path = seg + "." + fe.path
	}
	return fe
}

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

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

func wrongType(want string, got any) error {
	return &fieldError{err: fmt.Errorf("expected %s, got %T", want, got)}
}
