package native

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Health rules judge a member object from its own spec and status, as
// Karmada does: a workload is healthy once its controller has observed the
// latest spec and the updated replicas are all available.
func healthRules() map[schema.GroupVersionKind]healthFunc {
	return map[schema.GroupVersionKind]healthFunc{
		deploymentGVK:  deploymentHealth,
		replicaSetGVK:  replicaSetHealth,
		statefulSetGVK: statefulSetHealth,
		daemonSetGVK:   daemonSetHealth,
		jobGVK:         jobHealth,
		cronJobGVK:     cronJobHealth,
		podGVK:         podHealth,
		serviceGVK:     serviceHealth,
		ingressGVK:     ingressHealth,
		pvcGVK:         pvcHealth,
		pvGVK:          pvHealth,
		pdbGVK:         pdbHealth,
		hpaV2GVK:       hpaHealth,
		hpaV1GVK:       hpaHealth,
	}
}

// ints reads integer fields of one map; a missing field reads 0.
type ints struct {
	m   map[string]any
	err error
}

func (r *ints) get(fields ...string) int64 {
	if r.err != nil {
		return 0
	}
	n, _, err := nestedInt(r.m, fields...)
	r.err = err
	return n
}

func generationObserved(obj *unstructured.Unstructured, r *ints) bool {
	return r.get("status", "observedGeneration") == obj.GetGeneration()
}

// deploymentHealth: observed the latest generation, all desired replicas
// updated, and every updated replica available.
func deploymentHealth(obj *unstructured.Unstructured) (bool, error) {
	r := &ints{m: obj.Object}
	replicas, set, err := nestedInt(obj.Object, "spec", "replicas")
	if err != nil {
		return false, err
	}
	if !set {
		replicas = 1
	}
	healthy := generationObserved(obj, r) &&
		r.get("status", "updatedReplicas") >= replicas &&
		r.get("status", "availableReplicas") >= r.get("status", "updatedReplicas")
	return healthy && r.err == nil, r.err
}

func replicaSetHealth(obj *unstructured.Unstructured) (bool, error) {
	r := &ints{m: obj.Object}
	replicas, set, err := nestedInt(obj.Object, "spec", "replicas")
	if err != nil {
		return false, err
	}
	if !set {
		replicas = 1
	}
	healthy := generationObserved(obj, r) && r.get("status", "availableReplicas") >= replicas
	return healthy && r.err == nil, r.err
}

// statefulSetHealth follows kubectl rollout status: a partitioned rolling
// update is complete once the pods at or above the partition are updated,
// and every pod must be available.
func statefulSetHealth(obj *unstructured.Unstructured) (bool, error) {
	r := &ints{m: obj.Object}
	if !generationObserved(obj, r) {
		return false, r.err
	}
	replicas, set, err := nestedInt(obj.Object, "spec", "replicas")
	if err != nil {
		return false, err
	}
	if !set {
		replicas = 1
	}
	partition := r.get("spec", "updateStrategy", "rollingUpdate", "partition")
	updated := r.get("status", "updatedReplicas")
	available := r.get("status", "availableReplicas")
	healthy := updated >= replicas-partition && available >= replicas && available >= updated
	return healthy && r.err == nil, r.err
}

func daemonSetHealth(obj *unstructured.Unstructured) (bool, error) {
	r := &ints{m: obj.Object}
	healthy := generationObserved(obj, r) &&
		r.get("status", "updatedNumberScheduled") >= r.get("status", "desiredNumberScheduled") &&
		r.get("status", "numberAvailable") >= r.get("status", "updatedNumberScheduled")
	return healthy && r.err == nil, r.err
}

// conditionStatus returns the status of the condition of type t in
// status.conditions, "" when absent.
func conditionStatus(obj *unstructured.Unstructured, t string) (string, error) {
	conditions, err := nestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return "", err
	}
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			s, _ := m["status"].(string)
			return s, nil
		}
	}
	return "", nil
}

// jobHealth: a Job is unhealthy once it failed.
func jobHealth(obj *unstructured.Unstructured) (bool, error) {
	failed, err := conditionStatus(obj, "Failed")
	return err == nil && failed != "True", err
}

// cronJobHealth: a CronJob itself cannot fail; its Jobs are judged apart.
func cronJobHealth(*unstructured.Unstructured) (bool, error) { return true, nil }

// podHealth: succeeded, or running and ready.
func podHealth(obj *unstructured.Unstructured) (bool, error) {
	phase, err := nestedString(obj.Object, "status", "phase")
	if err != nil {
		return false, err
	}
	if phase == "Succeeded" {
		return true, nil
	}
	ready, err := conditionStatus(obj, "Ready")
	return err == nil && phase == "Running" && ready == "True", err
}

// serviceHealth: a LoadBalancer Service is healthy once it has an ingress
// point; other Services always are.
func serviceHealth(obj *unstructured.Unstructured) (bool, error) {
	t, err := nestedString(obj.Object, "spec", "type")
	if err != nil {
		return false, err
	}
	if t != "LoadBalancer" {
		return true, nil
	}
	return hasIngressPoint(obj)
}

func ingressHealth(obj *unstructured.Unstructured) (bool, error) { return hasIngressPoint(obj) }

func hasIngressPoint(obj *unstructured.Unstructured) (bool, error) {
	ingress, err := nestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	if err != nil {
		return false, err
	}
	for _, i := range ingress {
		if m, ok := i.(map[string]any); ok {
			if ip, _ := m["ip"].(string); ip != "" {
				return true, nil
			}
			if host, _ := m["hostname"].(string); host != "" {
				return true, nil
			}
		}
	}
	return false, nil
}

func pvcHealth(obj *unstructured.Unstructured) (bool, error) {
	phase, err := nestedString(obj.Object, "status", "phase")
	return err == nil && phase == "Bound", err
}

// pvHealth: bound, or available for binding.
func pvHealth(obj *unstructured.Unstructured) (bool, error) {
	phase, err := nestedString(obj.Object, "status", "phase")
	return err == nil && (phase == "Bound" || phase == "Available"), err
}

func pdbHealth(obj *unstructured.Unstructured) (bool, error) {
	r := &ints{m: obj.Object}
	healthy := r.get("status", "currentHealthy") >= r.get("status", "desiredHealthy")
	return healthy && r.err == nil, r.err
}

// hpaHealth: healthy unless the autoscaler reports it cannot scale or its
// metrics are not available.
func hpaHealth(obj *unstructured.Unstructured) (bool, error) {
	for _, t := range []string{"AbleToScale", "ScalingActive"} {
		s, err := conditionStatus(obj, t)
		if err != nil || s == "False" {
			return false, err
		}
	}
	return true, nil
}
