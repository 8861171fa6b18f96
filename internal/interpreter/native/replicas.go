package native

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func replicaRules() map[schema.GroupVersionKind]replicaFunc {
	return map[schema.GroupVersionKind]replicaFunc{
		deploymentGVK:  templateReplicas,
		replicaSetGVK:  templateReplicas,
		statefulSetGVK: templateReplicas,
		jobGVK:         jobReplicas,
		podGVK:         podReplicas,
	}
}

// templateReplicas reads spec.replicas (1 when unset, the API default) and
// the requirements of spec.template.
func templateReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	replicas, err := int32Field(obj.Object, 1, "spec", "replicas")
	if err != nil {
		return 0, nil, err
	}
	requires, err := templateRequirements(obj, "spec", "template", "spec")
	return replicas, requires, err
}

// jobReplicas is the number of pods a Job runs at once: parallelism (1 when
// unset), but never more than completions when those are set.
func jobReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	replicas, err := jobWidth(obj)
	if err != nil {
		return 0, nil, err
	}
	requires, err := templateRequirements(obj, "spec", "template", "spec")
	return replicas, requires, err
}

func jobWidth(obj *unstructured.Unstructured) (int32, error) {
	parallelism, err := int32Field(obj.Object, 1, "spec", "parallelism")
	if err != nil {
		return 0, err
	}
	completions, ok, err := nestedInt(obj.Object, "spec", "completions")
	if err != nil {
		return 0, err
	}
	if ok && completions >= 0 && completions < int64(parallelism) {
		return int32(completions), nil
	}
	return parallelism, nil
}

func podReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	requires, err := templateRequirements(obj, "spec")
	return 1, requires, err
}

func templateRequirements(obj *unstructured.Unstructured, fields ...string) (*workv1alpha2.ReplicaRequirements, error) {
	spec, err := nestedMap(obj.Object, fields...)
	if err != nil {
		return nil, err
	}
	return podRequirements(spec, obj.GetNamespace())
}
