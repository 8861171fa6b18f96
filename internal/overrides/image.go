package overrides

import (
	"fmt"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// applyImageOverrider rewrites the image at the predicate path, or, without
// a predicate, every container and init container image of a known workload
// kind. Other kinds are left alone, as in Karmada.
func applyImageOverrider(obj map[string]any, kind string, o *policyv1alpha1.ImageOverrider) error {
	if o.Predicate != nil {
		return overrideImageAt(obj, o.Predicate.Path, o)
	}
	specPath := podSpecPath(kind)
	if specPath == "" {
		return nil
	}
	spec, ok, err := walkMap(obj, specPath)
	if err != nil || !ok {
		return err
	}
	for _, field := range [...]string{"containers", "initContainers"} {
		list, err := containerList(spec, specPath, field)
		if err != nil {
			return err
		}
		for i, c := range list {
			if err := overrideContainerImage(c, containerPath(specPath, field, i), o); err != nil {
				return err
			}
		}
	}
	return nil
}

func overrideContainerImage(c any, path string, o *policyv1alpha1.ImageOverrider) error {
	container, ok := c.(map[string]any)
	if !ok {
		return &pathError{path: path, err: fmt.Errorf("container is %s, not an object", typeName(c))}
	}
	path += "/image"
	image, ok := container["image"].(string)
	if !ok {
		return &pathError{path: path, err: fmt.Errorf("image is %s, not a string", typeName(container["image"]))}
	}
	out, err := overrideImage(image, o)
	if err != nil {
		return &pathError{path: path, err: err}
	}
	container["image"] = out
	return nil
}

func overrideImageAt(obj map[string]any, path string, o *policyv1alpha1.ImageOverrider) error {
	p, err := parsePointer(path)
	if err != nil {
		return &pathError{path: path, err: err}
	}
	cur, err := p.get(obj)
	if err != nil {
		return &pathError{path: path, err: err}
	}
	image, ok := cur.(string)
	if !ok {
		return &pathError{path: path, err: fmt.Errorf("predicate path holds %s, not an image string", typeName(cur))}
	}
	out, err := overrideImage(image, o)
	if err != nil {
		return &pathError{path: path, err: err}
	}
	if err := p.patch(obj, policyv1alpha1.OverriderOpReplace, out); err != nil {
		return &pathError{path: path, err: err}
	}
	return nil
}

// overrideImage applies Karmada's image semantics. add appends the value to
// the component's current text (so adding a registry to "nginx" prepends
// one, and "-debug" added to a repository or tag extends it), replace sets
// it, remove clears it.
func overrideImage(image string, o *policyv1alpha1.ImageOverrider) (string, error) {
	ref, err := parseImage(image)
	if err != nil {
		return "", err
	}
	if o.Operator != policyv1alpha1.OverriderOpRemove && o.Value == "" {
		return "", fmt.Errorf("%s %s needs a value", o.Operator, o.Component)
	}
	switch o.Component {
	case policyv1alpha1.Registry:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			ref.registry += o.Value
		case policyv1alpha1.OverriderOpReplace:
			ref.registry = o.Value
		case policyv1alpha1.OverriderOpRemove:
			ref.registry = ""
		default:
			return "", fmt.Errorf("unknown operator %q", o.Operator)
		}
	case policyv1alpha1.Repository:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			ref.repository += o.Value
		case policyv1alpha1.OverriderOpReplace:
			ref.repository = o.Value
		case policyv1alpha1.OverriderOpRemove:
			// Karmada would emit "registry/:tag", which no runtime can pull.
			return "", fmt.Errorf("remove Repository would leave %q without a name", image)
		default:
			return "", fmt.Errorf("unknown operator %q", o.Operator)
		}
	case policyv1alpha1.Tag:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			err = ref.setTagOrDigest(ref.tagOrDigest() + o.Value)
		case policyv1alpha1.OverriderOpReplace:
			err = ref.setTagOrDigest(o.Value)
		case policyv1alpha1.OverriderOpRemove:
			ref.removeTagOrDigest()
		default:
			return "", fmt.Errorf("unknown operator %q", o.Operator)
		}
		if err != nil {
			return "", fmt.Errorf("%s Tag on %q: %w", o.Operator, image, err)
		}
	default:
		return "", fmt.Errorf("unknown image component %q", o.Component)
	}
	out := ref.String()
	// The pieces are checked as a whole: a registry value with a space or an
	// upper-case repository would otherwise reach the member as a bad image.
	if _, err := parseImage(out); err != nil {
		return "", fmt.Errorf("%s %s %q on %q gives an invalid image: %w", o.Operator, o.Component, o.Value, image, err)
	}
	return out, nil
}
