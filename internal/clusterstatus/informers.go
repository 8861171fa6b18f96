package clusterstatus

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// Keys of this controller's informers in the member informer manager. They
// hold trimmed objects, so they are not shared under the plain resource
// names other controllers might use.
const (
	nodesInformer = "clusterstatus/nodes"
	podsInformer  = "clusterstatus/pods"
)

// activePods leaves out terminated pods, which hold no resources: on a
// member running many Jobs they would be most of the pods.
const activePods = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

func newNodeInformer(c *membercluster.Clients) cache.SharedIndexInformer {
	nodes := c.Kube.CoreV1().Nodes()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return nodes.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return nodes.Watch(ctx, opts)
		},
	}, &corev1.Node{}, 0, cache.Indexers{})
	// Only set before the informer runs, which the manager does after this.
	_ = inf.SetTransform(trimNode)
	return inf
}

func newPodInformer(c *membercluster.Clients) cache.SharedIndexInformer {
	pods := c.Kube.CoreV1().Pods(metav1.NamespaceAll)
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = activePods
			return pods.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = activePods
			return pods.Watch(ctx, opts)
		},
	}, &corev1.Pod{}, 0, cache.Indexers{})
	_ = inf.SetTransform(trimPod)
	return inf
}

// trimNode keeps what the summaries read: allocatable and readiness. A node
// object is mostly images, addresses and managed fields.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion}}
	out.Status.Allocatable = n.Status.Allocatable
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out, nil
}

// trimPod keeps what podrequests.ForPod and the summaries read: the node, the phase
// and the requests of containers, init containers, pod and overhead.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion}}
	out.Spec.NodeName = p.Spec.NodeName
	out.Spec.Overhead = p.Spec.Overhead
	if p.Spec.Resources != nil {
		out.Spec.Resources = &corev1.ResourceRequirements{Requests: p.Spec.Resources.Requests}
	}
	out.Spec.Containers = trimContainers(p.Spec.Containers)
	out.Spec.InitContainers = trimContainers(p.Spec.InitContainers)
	out.Status.Phase = p.Status.Phase
	return out, nil
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{
			Name:          c.Name,
			RestartPolicy: c.RestartPolicy,
			Resources:     corev1.ResourceRequirements{Requests: c.Resources.Requests},
		}
	}
	return out
}

// listNodes and listPods read an informer's store.
func listNodes(inf cache.SharedIndexInformer) []*corev1.Node {
	items := inf.GetStore().List()
	out := make([]*corev1.Node, 0, len(items))
	for _, o := range items {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, n)
		}
	}
	return out
}

func listPods(inf cache.SharedIndexInformer) []*corev1.Pod {
	items := inf.GetStore().List()
	out := make([]*corev1.Pod, 0, len(items))
	for _, o := range items {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}
