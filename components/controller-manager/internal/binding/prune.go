package binding

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotations and labels that the control plane's own controllers put on
// templates and that mean nothing, or the wrong thing, in a member.
const (
	deploymentRevisionAnnotation        = "deployment.kubernetes.io/revision"
	deploymentRevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	pvcSelectedNodeAnnotation           = "volume.kubernetes.io/selected-node"
	legacyJobControllerUIDLabel         = "controller-uid"
	legacyJobNameLabel                  = "job-name"
)

// prune removes from a template what the control plane's API server and
// controllers filled in and what must not reach a member, as Karmada does
// (its native prune): server metadata, status, and per kind the fields a
// member sets for itself. It changes obj in place.
func prune(obj *unstructured.Unstructured) {
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		// Filled in by the API server; a member fills in its own.
		serverMetadata := [...]string{
			"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields",
			"resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers",
		}
		for _, f := range serverMetadata {
			delete(md, f)
		}
	}
	delete(obj.Object, "status")

	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "apps" && gvk.Kind == "Deployment":
		removeAnnotations(obj, deploymentRevisionAnnotation, deploymentRevisionHistoryAnnotation)
	case gvk.Group == "batch" && gvk.Kind == "Job":
		pruneJob(obj)
	case gvk.Group == "" && gvk.Kind == "Service":
		pruneService(obj)
	case gvk.Group == "" && gvk.Kind == "ServiceAccount":
		pruneServiceAccount(obj)
	case gvk.Group == "" && gvk.Kind == "Secret":
		pruneSecret(obj)
	case gvk.Group == "" && gvk.Kind == "PersistentVolumeClaim":
		removeAnnotations(obj, pvcSelectedNodeAnnotation)
	}
}

func removeAnnotations(obj *unstructured.Unstructured, keys ...string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		return
	}
	n := len(annotations)
	for _, k := range keys {
		delete(annotations, k)
	}
	switch {
	case len(annotations) == 0:
		obj.SetAnnotations(nil)
	case len(annotations) != n:
		obj.SetAnnotations(annotations)
	}
}

// pruneJob drops the selector and pod labels the API server generated from
// the template's uid (a member generates its own and rejects ours), unless
// the selector is manual, and ttlSecondsAfterFinished: a member deleting a
// finished Job by itself would have it recreated.
func pruneJob(obj *unstructured.Unstructured) {
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return
	}
	delete(spec, "ttlSecondsAfterFinished")
	if manual, _ := spec["manualSelector"].(bool); manual {
		return
	}
	generated := []string{legacyJobControllerUIDLabel, batchv1.ControllerUidLabel}
	if selector, ok := spec["selector"].(map[string]any); ok {
		if ml, ok := selector["matchLabels"].(map[string]any); ok {
			for _, k := range generated {
				delete(ml, k)
			}
			if len(ml) == 0 {
				delete(selector, "matchLabels")
			}
		}
		if len(selector) == 0 {
			delete(spec, "selector")
		}
	}
	labels, _, _ := unstructured.NestedMap(spec, "template", "metadata", "labels")
	if labels == nil {
		return
	}
	n := len(labels)
	for _, k := range append(generated, legacyJobNameLabel, batchv1.JobNameLabel) {
		delete(labels, k)
	}
	if len(labels) != n {
		_ = unstructured.SetNestedMap(spec, labels, "template", "metadata", "labels")
	}
}

// pruneService drops the cluster IPs the control plane allocated; a
// headless Service (clusterIP None) keeps them.
func pruneService(obj *unstructured.Unstructured) {
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return
	}
	if ip, ok := spec["clusterIP"].(string); ok && ip != corev1.ClusterIPNone {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	}
}

// pruneServiceAccount drops the token Secrets the control plane generated
// for the account.
func pruneServiceAccount(obj *unstructured.Unstructured) {
	secrets, ok := obj.Object["secrets"].([]any)
	if !ok || len(secrets) == 0 {
		return
	}
	prefix := obj.GetName() + "-token-"
	kept := secrets[:0:0]
	for _, s := range secrets {
		if m, ok := s.(map[string]any); ok {
			if name, _ := m["name"].(string); strings.HasPrefix(name, prefix) {
				continue
			}
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		delete(obj.Object, "secrets")
		return
	}
	obj.Object["secrets"] = kept
}

// pruneSecret drops the token and account uid of a service-account token
// Secret: the member's token controller fills in its own.
func pruneSecret(obj *unstructured.Unstructured) {
	if t, _ := obj.Object["type"].(string); t != string(corev1.SecretTypeServiceAccountToken) {
		return
	}
	removeAnnotations(obj, corev1.ServiceAccountUIDKey)
	delete(obj.Object, "data")
}
