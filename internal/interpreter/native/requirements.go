package native

import (
	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/podrequests"
)

// podRequirements computes what one pod of spec needs from a node, the way
// the Kubernetes scheduler sees it: the resource request (see
// podResourceRequest), the node claim (node selector, tolerations, required
// node affinity) and the priority class. It returns nil when neither a
// request nor a node claim remains, as Karmada does.
func podRequirements(spec map[string]any, namespace string) (*workv1alpha2.ReplicaRequirements, error) {
	if spec == nil {
		return nil, nil
	}
	claim, err := nodeClaim(spec)
	if err != nil {
		return nil, err
	}
	request, err := podResourceRequest(spec)
	if err != nil {
		return nil, err
	}
	if claim == nil && request == nil {
		return nil, nil
	}
	priority, err := nestedString(spec, "priorityClassName")
	if err != nil {
		return nil, err
	}
	return &workv1alpha2.ReplicaRequirements{
		NodeClaim:         claim,
		ResourceRequest:   request,
		Namespace:         namespace,
		PriorityClassName: priority,
	}, nil
}

func nodeClaim(spec map[string]any) (*workv1alpha2.NodeClaim, error) {
	selector, err := stringMap(spec["nodeSelector"], "nodeSelector")
	if err != nil {
		return nil, err
	}
	var tolerations []corev1.Toleration
	if v, ok := spec["tolerations"]; ok && v != nil {
		if err := fromUnstructured(v, &tolerations, "tolerations"); err != nil {
			return nil, err
		}
	}
	var hard *corev1.NodeSelector
	required, err := lookup(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
	if err != nil {
		return nil, err
	}
	if required != nil {
		hard = &corev1.NodeSelector{}
		if err := fromUnstructured(required, hard, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"); err != nil {
			return nil, err
		}
	}
	if len(selector) == 0 && len(tolerations) == 0 && hard == nil {
		return nil, nil
	}
	if len(selector) == 0 {
		selector = nil
	}
	return &workv1alpha2.NodeClaim{NodeSelector: selector, Tolerations: tolerations, HardNodeAffinity: hard}, nil
}

// podResourceRequest is the effective request of the pods made from the
// template spec (podrequests.ForTemplate: sidecars, init containers,
// pod-level resources and overhead, after the API server's defaulting),
// written as Karmada writes it.
func podResourceRequest(spec map[string]any) (corev1.ResourceList, error) {
	return podrequests.FormattedTemplateFromUnstructured(spec)
}
