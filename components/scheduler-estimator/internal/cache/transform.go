package cache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/internal/podrequests"
)

// TransformNode is the Node informer's transform: it keeps what the
// estimator reads (name, labels, taints, spec.unschedulable, allocatable)
// and drops the rest — images, conditions, addresses, managed fields are
// most of a node's size.
func TransformNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Labels: n.Labels},
		Spec:       corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable},
		Status:     corev1.NodeStatus{Allocatable: n.Status.Allocatable},
	}, nil
}

// TransformPod is the Pod informer's transform. The pod keeps its identity,
// its controller, its node, its phase and its PodScheduled condition; its
// containers are replaced by one holding the pod's effective requests
// (init containers, sidecars, pod-level resources and overhead folded in),
// computed once here instead of on every event, and the same when computed
// again from the slim pod.
func TransformPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion,
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{
			NodeName:   p.Spec.NodeName,
			Containers: []corev1.Container{{Name: "requests", Resources: corev1.ResourceRequirements{Requests: podrequests.ForPod(&p.Spec)}}},
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		slim.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			slim.Status.Conditions = []corev1.PodCondition{c}
		}
	}
	return slim, nil
}
