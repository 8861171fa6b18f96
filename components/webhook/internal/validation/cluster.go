package validation

import (
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ClusterNameMaxLength bounds member cluster names, as Karmada does: the
// execution namespace karmada-es-<name> must stay a valid namespace name.
const ClusterNameMaxLength = 48

// ClusterName checks the name of a member cluster: a DNS-1123 label of at
// most ClusterNameMaxLength characters.
func ClusterName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(name) > ClusterNameMaxLength {
		errs = append(errs, field.TooLong(path, name, ClusterNameMaxLength))
	}
	return errs
}
