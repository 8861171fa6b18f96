package native

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func reviseRules() map[schema.GroupVersionKind]reviseFunc {
	return map[schema.GroupVersionKind]reviseFunc{
		deploymentGVK:  reviseSpecReplicas,
		replicaSetGVK:  reviseSpecReplicas,
		statefulSetGVK: reviseSpecReplicas,
		jobGVK:         reviseJob,
	}
}

func reviseSpecReplicas(obj *unstructured.Unstructured, replicas int64) error {
	spec, err := ensureMap(obj.Object, "spec")
	if err != nil {
		return err
	}
	spec["replicas"] = replicas
	return nil
}

// reviseJob gives a member its share of a Job: parallelism becomes the
// member's replicas and, when completions are set, the member gets the same
// share of them, rounded up so that the members together never complete
// fewer than the template asks (the split is proportional to the template's
// width, min(parallelism, completions), which is what GetReplicas reports).
func reviseJob(obj *unstructured.Unstructured, replicas int64) error {
	width, err := jobWidth(obj)
	if err != nil {
		return err
	}
	completions, hasCompletions, err := nestedInt(obj.Object, "spec", "completions")
	if err != nil {
		return err
	}
	spec, err := ensureMap(obj.Object, "spec")
	if err != nil {
		return err
	}
	spec["parallelism"] = replicas
	if hasCompletions && width > 0 {
		share := (completions*replicas + int64(width) - 1) / int64(width)
		spec["completions"] = min(share, completions)
	}
	return nil
}
