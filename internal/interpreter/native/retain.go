package native

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Retention keeps the fields a member cluster owns (allocated IPs and
// ports, bound volumes, generated selectors, scheduled nodes) when the
// control plane updates the object there; sending the template's empty
// values would be refused as changes to immutable fields, or undo the
// member's work.
func retainRules() map[schema.GroupVersionKind]retainFunc {
	return map[schema.GroupVersionKind]retainFunc{
		serviceGVK:     retainService,
		saGVK:          retainServiceAccount,
		pvcGVK:         retainPersistentVolumeClaim,
		pvGVK:          retainPersistentVolume,
		jobGVK:         retainJob,
		podGVK:         retainPod,
		deploymentGVK:  retainWorkloadReplicas,
		statefulSetGVK: retainWorkloadReplicas,
	}
}

// keepField copies observed's value at path into desired when it is set
// (and, for strings, not empty).
func keepField(desired, observed map[string]any, path ...string) error {
	v, err := lookup(observed, path...)
	if err != nil || v == nil {
		return err
	}
	if s, ok := v.(string); ok && s == "" {
		return nil
	}
	parent := desired
	for _, f := range path[:len(path)-1] {
		if parent, err = ensureMap(parent, f); err != nil {
			return err
		}
	}
	parent[path[len(path)-1]] = copyJSON(v)
	return nil
}

// retainService keeps the cluster IPs, the health check node port and the
// node port of each port the member allocated.
func retainService(desired, observed *unstructured.Unstructured) error {
	d, o := desired.Object, observed.Object
	for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort"} {
		if err := keepField(d, o, "spec", f); err != nil {
			return err
		}
	}
	svcType, err := nestedString(d, "spec", "type")
	if err != nil {
		return err
	}
	if svcType != "NodePort" && svcType != "LoadBalancer" {
		return nil
	}
	observedPorts, err := nestedSlice(o, "spec", "ports")
	if err != nil {
		return err
	}
	desiredPorts, err := nestedSlice(d, "spec", "ports")
	if err != nil {
		return err
	}
	for i, dp := range desiredPorts {
		port, ok := dp.(map[string]any)
		if !ok {
			return fieldError(fmt.Sprintf("spec.ports[%d]", i), "an object", dp)
		}
		if port["nodePort"] != nil {
			continue
		}
		for _, op := range observedPorts {
			if obs, ok := op.(map[string]any); ok && samePort(port, obs) && obs["nodePort"] != nil {
				port["nodePort"] = obs["nodePort"]
				break
			}
		}
	}
	return nil
}

// samePort matches service ports by name, port number and protocol (TCP
// when unset, the API default).
func samePort(a, b map[string]any) bool {
	an, bn := a["port"], b["port"]
	ai, aok := toInt64(an)
	bi, bok := toInt64(bn)
	return aok && bok && ai == bi && a["name"] == b["name"] && protocol(a) == protocol(b)
}

func protocol(port map[string]any) any {
	if p, ok := port["protocol"].(string); ok && p != "" {
		return p
	}
	return "TCP"
}

// retainServiceAccount keeps the token secrets the member added to the
// account, after the template's own.
func retainServiceAccount(desired, observed *unstructured.Unstructured) error {
	observedSecrets, err := nestedSlice(observed.Object, "secrets")
	if err != nil || len(observedSecrets) == 0 {
		return err
	}
	desiredSecrets, err := nestedSlice(desired.Object, "secrets")
	if err != nil {
		return err
	}
	names := make(map[any]bool, len(desiredSecrets))
	merged := make([]any, 0, len(desiredSecrets)+len(observedSecrets))
	for _, s := range desiredSecrets {
		if m, ok := s.(map[string]any); ok {
			names[m["name"]] = true
		}
		merged = append(merged, s)
	}
	for _, s := range observedSecrets {
		if m, ok := s.(map[string]any); ok && !names[m["name"]] {
			names[m["name"]] = true
			merged = append(merged, copyJSON(s))
		}
	}
	desired.Object["secrets"] = merged
	return nil
}

// retainPersistentVolumeClaim keeps the bound volume and the storage class
// the member's default class filled in (both immutable).
func retainPersistentVolumeClaim(desired, observed *unstructured.Unstructured) error {
	if err := keepField(desired.Object, observed.Object, "spec", "volumeName"); err != nil {
		return err
	}
	if class, err := lookup(desired.Object, "spec", "storageClassName"); err != nil || class != nil {
		return err
	}
	return keepField(desired.Object, observed.Object, "spec", "storageClassName")
}

// retainPersistentVolume keeps the claim the member bound the volume to.
func retainPersistentVolume(desired, observed *unstructured.Unstructured) error {
	return keepField(desired.Object, observed.Object, "spec", "claimRef")
}

// retainJob keeps the member's generated selector and the controller
// labels of the pod template (the control plane's are tied to the
// template's own uid, and both fields are immutable).
func retainJob(desired, observed *unstructured.Unstructured) error {
	if err := keepField(desired.Object, observed.Object, "spec", "selector"); err != nil {
		return err
	}
	observedLabels, err := nestedMap(observed.Object, "spec", "template", "metadata", "labels")
	if err != nil {
		return err
	}
	desiredLabels, err := nestedMap(desired.Object, "spec", "template", "metadata", "labels")
	if err != nil {
		return err
	}
	if desiredLabels == nil {
		if observedLabels == nil {
			return nil
		}
		spec, err := ensureMap(desired.Object, "spec")
		if err != nil {
			return err
		}
		tpl, err := ensureMap(spec, "template")
		if err != nil {
			return err
		}
		meta, err := ensureMap(tpl, "metadata")
		if err != nil {
			return err
		}
		if desiredLabels, err = ensureMap(meta, "labels"); err != nil {
			return err
		}
	}
	// The labels the Job controller puts on the pod template, tied to the
	// Job's uid in the member.
	for _, key := range []string{
		"controller-uid", "batch.kubernetes.io/controller-uid",
		"job-name", "batch.kubernetes.io/job-name",
	} {
		if v, ok := observedLabels[key]; ok {
			desiredLabels[key] = v
		} else {
			delete(desiredLabels, key)
		}
	}
	return nil
}

// retainPod keeps what the member's scheduler and admission set on the
// pod: the node, the service account and its token volume with the mounts,
// and tolerations added there (pod tolerations can only be added to).
func retainPod(desired, observed *unstructured.Unstructured) error {
	d, o := desired.Object, observed.Object
	for _, f := range []string{"nodeName", "serviceAccountName", "serviceAccount", "volumes"} {
		if err := keepField(d, o, "spec", f); err != nil {
			return err
		}
	}
	for _, list := range []string{"containers", "initContainers"} {
		if err := retainVolumeMounts(d, o, list); err != nil {
			return err
		}
	}
	return retainTolerations(d, o)
}

func retainVolumeMounts(d, o map[string]any, list string) error {
	observed, err := nestedSlice(o, "spec", list)
	if err != nil {
		return err
	}
	desired, err := nestedSlice(d, "spec", list)
	if err != nil {
		return err
	}
	mounts := make(map[any]any, len(observed))
	for _, c := range observed {
		if m, ok := c.(map[string]any); ok {
			mounts[m["name"]] = m["volumeMounts"]
		}
	}
	for _, c := range desired {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if vm, ok := mounts[m["name"]]; ok && vm != nil {
			m["volumeMounts"] = copyJSON(vm)
		}
	}
	return nil
}

func retainTolerations(d, o map[string]any) error {
	observed, err := nestedSlice(o, "spec", "tolerations")
	if err != nil || len(observed) == 0 {
		return err
	}
	desired, err := nestedSlice(d, "spec", "tolerations")
	if err != nil {
		return err
	}
	merged := desired
	for _, t := range observed {
		if !containsJSON(desired, t) {
			merged = append(merged, copyJSON(t))
		}
	}
	spec, err := ensureMap(d, "spec")
	if err != nil {
		return err
	}
	spec["tolerations"] = merged
	return nil
}

// retainWorkloadReplicas keeps the member's replica count when the template
// asks for it with the label (or annotation)
// resourcetemplate.karmada.io/retain-replicas: "true", e.g. because an HPA
// in the member scales the workload.
func retainWorkloadReplicas(desired, observed *unstructured.Unstructured) error {
	key, want := workv1alpha1.RetainReplicasLabel, workv1alpha1.RetainReplicasValue
	if desired.GetLabels()[key] != want && desired.GetAnnotations()[key] != want {
		return nil
	}
	return keepField(desired.Object, observed.Object, "spec", "replicas")
}
