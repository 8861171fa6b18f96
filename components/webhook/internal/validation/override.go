package validation

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// OverrideSpec checks the spec of an OverridePolicy or
// ClusterOverridePolicy.
func OverrideSpec(spec *policyv1alpha1.OverrideSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ResourceSelectors(spec.ResourceSelectors, path.Child("resourceSelectors"))...)
	if len(spec.OverrideRules) > 0 {
		if spec.TargetCluster != nil {
			errs = append(errs, field.Forbidden(path.Child("targetCluster"), "may not be set together with overrideRules"))
		}
		if !emptyOverriders(&spec.Overriders) {
			errs = append(errs, field.Forbidden(path.Child("overriders"), "may not be set together with overrideRules"))
		}
	}
	errs = append(errs, ClusterAffinity(spec.TargetCluster, path.Child("targetCluster"))...)
	errs = append(errs, overriders(&spec.Overriders, path.Child("overriders"))...)
	for i := range spec.OverrideRules {
		r := &spec.OverrideRules[i]
		p := path.Child("overrideRules").Index(i)
		errs = append(errs, ClusterAffinity(r.TargetCluster, p.Child("targetCluster"))...)
		errs = append(errs, overriders(&r.Overriders, p.Child("overriders"))...)
	}
	return errs
}

func emptyOverriders(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 &&
		len(o.ArgsOverrider) == 0 && len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 &&
		len(o.FieldOverrider) == 0
}

func overriders(o *policyv1alpha1.Overriders, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, p := range o.Plaintext {
		errs = append(errs, jsonPointer(p.Path, path.Child("plaintext").Index(i).Child("path"))...)
	}
	for i, img := range o.ImageOverrider {
		if img.Predicate != nil {
			errs = append(errs, jsonPointer(img.Predicate.Path, path.Child("imageOverrider").Index(i).Child("predicate", "path"))...)
		}
	}
	for i, l := range o.LabelsOverrider {
		errs = append(errs, metav1validation.ValidateLabels(l.Value, path.Child("labelsOverrider").Index(i).Child("value"))...)
	}
	for i, a := range o.AnnotationsOverrider {
		errs = append(errs, apivalidation.ValidateAnnotations(a.Value, path.Child("annotationsOverrider").Index(i).Child("value"))...)
	}
	for i, f := range o.FieldOverrider {
		p := path.Child("fieldOverrider").Index(i)
		if len(f.JSON) > 0 && len(f.YAML) > 0 {
			errs = append(errs, field.Forbidden(p.Child("yaml"), "may not be set together with json"))
		}
		errs = append(errs, jsonPointer(f.FieldPath, p.Child("fieldPath"))...)
		for j, op := range f.JSON {
			errs = append(errs, jsonPointer(op.SubPath, p.Child("json").Index(j).Child("subPath"))...)
			errs = append(errs, operatorValue(op.Operator, op.Value, p.Child("json").Index(j).Child("value"))...)
		}
		for j, op := range f.YAML {
			errs = append(errs, jsonPointer(op.SubPath, p.Child("yaml").Index(j).Child("subPath"))...)
			errs = append(errs, operatorValue(op.Operator, op.Value, p.Child("yaml").Index(j).Child("value"))...)
		}
	}
	return errs
}

// operatorValue: add and replace need a value, remove takes none.
func operatorValue(op policyv1alpha1.OverriderOperator, value apiextensionsv1.JSON, path *field.Path) field.ErrorList {
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
		if len(value.Raw) == 0 {
			return field.ErrorList{field.Required(path, "required for add and replace")}
		}
	case policyv1alpha1.OverriderOpRemove:
		if len(value.Raw) != 0 {
			return field.ErrorList{field.Forbidden(path, "not allowed for remove")}
		}
	}
	return nil
}

// jsonPointer checks an RFC 6901 pointer: empty (the whole document) or
// "/"-separated tokens in which "~" is only followed by 0 or 1.
func jsonPointer(ptr string, path *field.Path) field.ErrorList {
	if ptr == "" {
		return nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return field.ErrorList{field.Invalid(path, ptr, "a JSON pointer must start with '/'")}
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] != '~' {
			continue
		}
		if i+1 == len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1') {
			return field.ErrorList{field.Invalid(path, ptr, "'~' must be escaped as '~0' or '~1' in a JSON pointer")}
		}
	}
	return nil
}
