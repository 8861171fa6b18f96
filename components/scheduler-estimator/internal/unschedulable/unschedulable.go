// Package unschedulable counts the replicas of a member's workload that
// kube-scheduler has not been able to place for a while: the descheduler's
// question, answered from the estimator's informer caches.
package unschedulable

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// ControllerIndex is the informer index of objects by the UID of their
// controller (the owner reference with controller: true).
const ControllerIndex = "controllerUID"

// IndexByController is the ControllerIndex function.
func IndexByController(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// TransformDeployment is the Deployment informer's transform: identity and
// the pod template, which finds the current ReplicaSet.
func TransformDeployment(obj any) (any, error) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return obj, nil
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name, UID: d.UID, ResourceVersion: d.ResourceVersion},
		Spec:       appsv1.DeploymentSpec{Template: d.Spec.Template},
	}, nil
}

// TransformReplicaSet is the ReplicaSet informer's transform: identity,
// controller, creation time and the pod template.
func TransformReplicaSet(obj any) (any, error) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return obj, nil
	}
	slim := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rs.Namespace, Name: rs.Name, UID: rs.UID, ResourceVersion: rs.ResourceVersion,
			CreationTimestamp: rs.CreationTimestamp,
		},
		Spec: appsv1.ReplicaSetSpec{Template: rs.Spec.Template},
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		slim.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return slim, nil
}

// Workloads finds the pods of a member's workloads in informer stores.
type Workloads struct {
	Deployments appslisters.DeploymentLister
	// ReplicaSets and Pods are indexed with ControllerIndex.
	ReplicaSets toolscache.Indexer
	Pods        toolscache.Indexer
}

// PodsOf returns the pods that make ref's replicas now. For a Deployment
// (group apps, any version) they are the pods of its current ReplicaSet —
// the one whose pod template is the Deployment's — so that the pods of an
// old ReplicaSet being scaled down do not count; none when the Deployment
// controller has not made it yet. Other kinds are refused with a field
// error on resource.kind, as Karmada's estimator refuses them: their
// replicas are not what the descheduler moves.
//
// A Deployment missing from the member is a NotFound API error.
func (w *Workloads) PodsOf(ref estimatorrpc.ObjectReference) ([]*corev1.Pod, error) {
	path := field.NewPath("resource")
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error())
	}
	if gv.Group != appsv1.GroupName || ref.Kind != "Deployment" {
		return nil, field.NotSupported(path.Child("kind"), gv.WithKind(ref.Kind).GroupKind().String(), []string{"Deployment.apps"})
	}
	if ref.Namespace == "" {
		return nil, field.Required(path.Child("namespace"), "")
	}
	if ref.Name == "" {
		return nil, field.Required(path.Child("name"), "")
	}
	d, err := w.Deployments.Deployments(ref.Namespace).Get(ref.Name)
	if err != nil {
		return nil, err
	}
	owned, err := byController[*appsv1.ReplicaSet](w.ReplicaSets, string(d.UID))
	if err != nil {
		return nil, err
	}
	rs := CurrentReplicaSet(d, owned)
	if rs == nil {
		return nil, nil
	}
	return byController[*corev1.Pod](w.Pods, string(rs.UID))
}

func byController[T any](idx toolscache.Indexer, uid string) ([]T, error) {
	objs, err := idx.ByIndex(ControllerIndex, uid)
	if err != nil {
		return nil, fmt.Errorf("listing by controller %s: %w", uid, err)
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// CurrentReplicaSet returns, among the ReplicaSets d controls, the oldest
// whose pod template equals d's but for the pod-template-hash label — the
// Deployment controller's "new ReplicaSet" — or nil.
func CurrentReplicaSet(d *appsv1.Deployment, owned []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	owned = slices.Clone(owned)
	slices.SortFunc(owned, func(a, b *appsv1.ReplicaSet) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	want := withoutHash(&d.Spec.Template)
	for _, rs := range owned {
		if apiequality.Semantic.DeepEqual(want, withoutHash(&rs.Spec.Template)) {
			return rs
		}
	}
	return nil
}

func withoutHash(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	if _, ok := t.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; !ok {
		return t
	}
	c := t.DeepCopy()
	delete(c.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return c
}

// Count returns how many of pods have been unschedulable — PodScheduled
// False with reason Unschedulable — since before now minus threshold. A
// negative threshold counts as zero, as Karmada's estimator takes it.
func Count(pods []*corev1.Pod, threshold time.Duration, now time.Time) int32 {
	threshold = max(threshold, 0)
	var n int32
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				c.LastTransitionTime.Add(threshold).Before(now) {
				n++
				break
			}
		}
	}
	return n
}
