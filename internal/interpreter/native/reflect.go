package native

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Status reflection picks from a member object's status what aggregation
// and health need, so that Work.status stays small. Workloads also carry
// their own generation and the template generation they were rendered from
// (annotation resourcetemplate.karmada.io/generation), which aggregation
// uses to tell whether every member has caught up with the template.
func reflectRules() map[schema.GroupVersionKind]reflectFunc {
	workload := func(fields ...string) reflectFunc {
		return func(obj *unstructured.Unstructured) (map[string]any, error) {
			status, err := pickStatus(obj, fields...)
			if err != nil || status == nil {
				return status, err
			}
			return status, addGenerations(obj, status)
		}
	}
	return map[schema.GroupVersionKind]reflectFunc{
		deploymentGVK: workload("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
			"unavailableReplicas", "observedGeneration"),
		replicaSetGVK: workload("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
			"observedGeneration"),
		statefulSetGVK: workload("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
			"availableReplicas", "observedGeneration"),
		daemonSetGVK: workload("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable",
			"numberMisscheduled", "numberReady", "updatedNumberScheduled", "numberUnavailable", "observedGeneration"),
		jobGVK:     pick("active", "succeeded", "failed", "ready", "conditions", "startTime", "completionTime"),
		serviceGVK: pick("loadBalancer"),
		pdbGVK: pick("disruptionsAllowed", "expectedPods", "desiredHealthy", "currentHealthy",
			"disruptedPods", "observedGeneration"),
		hpaV2GVK: pick("currentReplicas", "desiredReplicas", "lastScaleTime"),
		hpaV1GVK: pick("currentReplicas", "desiredReplicas", "lastScaleTime"),
	}
}

func pick(fields ...string) reflectFunc {
	return func(obj *unstructured.Unstructured) (map[string]any, error) {
		return pickStatus(obj, fields...)
	}
}

// pickStatus copies the named fields of .status; nil when there is no
// status at all.
func pickStatus(obj *unstructured.Unstructured, fields ...string) (map[string]any, error) {
	status, err := nestedMap(obj.Object, "status")
	if err != nil || status == nil {
		return nil, err
	}
	out := make(map[string]any, len(fields)+2)
	for _, f := range fields {
		if v, ok := status[f]; ok && v != nil {
			out[f] = copyJSON(v)
		}
	}
	return out, nil
}

// reflectWholeStatus is the rule of kinds without their own.
func reflectWholeStatus(obj *unstructured.Unstructured) (map[string]any, error) {
	status, err := nestedMap(obj.Object, "status")
	if err != nil || status == nil {
		return nil, err
	}
	return status, nil
}

func addGenerations(obj *unstructured.Unstructured, status map[string]any) error {
	if g := obj.GetGeneration(); g != 0 {
		status["generation"] = g
	}
	if v, ok := obj.GetAnnotations()[workv1alpha1.ResourceTemplateGenerationAnnotation]; ok {
		g, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fieldError("metadata.annotations["+workv1alpha1.ResourceTemplateGenerationAnnotation+"]", "an integer", v)
		}
		status["resourceTemplateGeneration"] = g
	}
	return nil
}
