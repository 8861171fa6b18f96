package nodeagent

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Heartbeats: the Lease is renewed every leaseRenew and lasts leaseSeconds,
// as the kubelet's; the Ready condition is written again every
// statusHeartbeat.
const (
	leaseSeconds    = 40
	leaseRenew      = 10 * time.Second
	statusHeartbeat = time.Minute
)

// registerNode creates the Node, or takes over one of the same name, and
// makes it Ready.
func (a *Agent) registerNode(ctx context.Context) error {
	nodes := a.client.CoreV1().Nodes()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: a.opts.NodeName,
		Labels: map[string]string{
			corev1.LabelHostname:   a.opts.NodeName,
			corev1.LabelOSStable:   runtime.GOOS,
			corev1.LabelArchStable: runtime.GOARCH,
		},
	}}
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		if created, err = nodes.Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("reading node %s: %w", node.Name, err)
		}
	case err != nil:
		return fmt.Errorf("registering node %s: %w", node.Name, err)
	}
	if err := a.writeNodeStatus(ctx, created); err != nil {
		return err
	}
	return a.renewLease(ctx)
}

// writeNodeStatus writes the node's addresses, capacity and conditions, the
// Ready condition's heartbeat now.
func (a *Agent) writeNodeStatus(ctx context.Context, node *corev1.Node) error {
	node = node.DeepCopy()
	heartbeat := metav1.Now()
	capacity := nodeAllocatable.DeepCopy()
	capacity[corev1.ResourcePods] = *resource.NewQuantity(int64(a.opts.MaxPods), resource.DecimalSI)
	node.Status.Capacity = capacity
	node.Status.Allocatable = capacity
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: hostIP},
		{Type: corev1.NodeHostName, Address: a.opts.NodeName},
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
		KubeletVersion:          "v0.0.0-nodeagent",
		ContainerRuntimeVersion: "nodeagent://processes",
	}
	conditions := []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "the flotilla test node agent runs pods as processes"},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"},
	}
	for i := range conditions {
		c := &conditions[i]
		c.LastHeartbeatTime = heartbeat
		c.LastTransitionTime = heartbeat
		for _, old := range node.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	node.Status.Conditions = conditions
	if _, err := a.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the status of node %s: %w", node.Name, err)
	}
	return nil
}

// renewLease creates or renews the node's Lease in kube-node-lease, which
// tells the node lifecycle controller the node is alive.
func (a *Agent) renewLease(ctx context.Context) error {
	leases := a.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NowMicro()
	lease, err := leases.Get(ctx, a.opts.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err := a.client.CoreV1().Nodes().Get(ctx, a.opts.NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading node %s: %w", a.opts.NodeName, err)
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name:      a.opts.NodeName,
				Namespace: corev1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
				}},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(a.opts.NodeName),
				LeaseDurationSeconds: ptr.To[int32](leaseSeconds),
				RenewTime:            &now,
			},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating the lease of node %s: %w", a.opts.NodeName, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the lease of node %s: %w", a.opts.NodeName, err)
	}
	lease.Spec.HolderIdentity = ptr.To(a.opts.NodeName)
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](leaseSeconds)
	lease.Spec.RenewTime = &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renewing the lease of node %s: %w", a.opts.NodeName, err)
	}
	return nil
}

// heartbeat keeps the Lease renewed and the Ready condition fresh until ctx
// ends.
func (a *Agent) heartbeat(ctx context.Context) {
	lease := time.NewTicker(leaseRenew)
	defer lease.Stop()
	status := time.NewTicker(statusHeartbeat)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			if err := a.renewLease(ctx); err != nil && ctx.Err() == nil {
				a.log.Error(err, "Node heartbeat")
			}
		case <-status.C:
			node, err := a.client.CoreV1().Nodes().Get(ctx, a.opts.NodeName, metav1.GetOptions{})
			if err == nil {
				err = a.writeNodeStatus(ctx, node)
			}
			if err != nil && ctx.Err() == nil {
				a.log.Error(err, "Node status heartbeat")
			}
		}
	}
}
