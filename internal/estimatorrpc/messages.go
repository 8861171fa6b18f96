// Package estimatorrpc is the gRPC protocol between a scheduler (or the
// descheduler) and the scheduler estimator of a member cluster, on the wire
// the same as Karmada's: service
// github.com.karmada_io.karmada.pkg.estimator.service.Estimator and the
// messages of package github.com.karmada_io.karmada.pkg.estimator.pb, so that
// either scheduler can ask either estimator.
//
// The messages are encoded with protowire by hand: Karmada's are generated
// from a .proto with protoc, which is not a Go tool; a dozen small messages do
// not justify a code generator in the build.
package estimatorrpc

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NodeClaim is the node-level constraints of a replica's pod.
type NodeClaim struct {
	// NodeAffinity is the pod's required node affinity.
	NodeAffinity *corev1.NodeSelector
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// ReplicaRequirements is what one replica needs.
type ReplicaRequirements struct {
	NodeClaim         *NodeClaim
	ResourceRequest   corev1.ResourceList
	Namespace         string
	PriorityClassName string
}

// ComponentReplicaRequirements is what one replica of a component needs.
type ComponentReplicaRequirements struct {
	NodeClaim         *NodeClaim
	ResourceRequest   corev1.ResourceList
	PriorityClassName string
}

// Component is one part of a multi-component workload set.
type Component struct {
	Name                string
	ReplicaRequirements ComponentReplicaRequirements
	Replicas            int32
}

// AssumedWorkload is a workload already placed on the cluster whose pods are
// not bound yet: the estimator counts its footprint as taken.
type AssumedWorkload struct {
	Namespace  string
	Components []Component
}

// MaxAvailableReplicasRequest asks how many replicas fit in Cluster.
type MaxAvailableReplicasRequest struct {
	Cluster             string
	ReplicaRequirements ReplicaRequirements
	AssumedWorkloads    []AssumedWorkload
}

// MaxAvailableReplicasResponse answers MaxAvailableReplicasRequest.
type MaxAvailableReplicasResponse struct {
	MaxReplicas int32
}

// MaxAvailableComponentSetsRequest asks how many complete sets of
// Components fit in Cluster.
type MaxAvailableComponentSetsRequest struct {
	Cluster          string
	Components       []Component
	Namespace        string
	AssumedWorkloads []AssumedWorkload
}

// MaxAvailableComponentSetsResponse answers MaxAvailableComponentSetsRequest.
type MaxAvailableComponentSetsResponse struct {
	MaxSets int32
}

// ObjectReference locates a workload in the member.
type ObjectReference struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// UnschedulableReplicasRequest asks how many replicas of Resource have been
// unschedulable for longer than UnschedulableThreshold.
type UnschedulableReplicasRequest struct {
	Cluster                string
	Resource               ObjectReference
	UnschedulableThreshold time.Duration
}

// UnschedulableReplicasResponse answers UnschedulableReplicasRequest.
type UnschedulableReplicasResponse struct {
	UnschedulableReplicas int32
}

// message is what the codec sends and receives.
type message interface {
	appendTo(b []byte) ([]byte, error)
	parse(b []byte) error
}

// Field numbers, as in Karmada's estimator.proto. Where Karmada replaced a
// Kubernetes-typed field by a bytes field, the old number is still read
// (the bytes are the same on the wire: an embedded message), so requests of
// older schedulers are understood; only the current numbers are written.
const (
	nodeClaimNodeAffinityOld   = 1
	nodeClaimNodeSelector      = 2
	nodeClaimTolerationsOld    = 3
	nodeClaimNodeAffinityBytes = 4
	nodeClaimTolerationsBytes  = 5

	replicaNodeClaim          = 1
	replicaResourceRequestOld = 2
	replicaNamespace          = 3
	replicaPriorityClassName  = 4
	replicaResourceRequest    = 5

	componentReqNodeClaim          = 1
	componentReqResourceRequestOld = 2
	componentReqPriorityClassName  = 3
	componentReqResourceRequest    = 4

	componentName         = 1
	componentRequirements = 2
	componentReplicas     = 3

	assumedNamespace  = 1
	assumedComponents = 2

	maxReplicasCluster      = 1
	maxReplicasRequirements = 2
	maxReplicasAssumed      = 3
	maxReplicasAnswer       = 1

	setsCluster    = 1
	setsComponents = 2
	setsNamespace  = 3
	setsAssumed    = 4
	setsAnswer     = 1

	refAPIVersion = 1
	refKind       = 2
	refNamespace  = 3
	refName       = 4

	unschedulableCluster   = 1
	unschedulableResource  = 2
	unschedulableThreshold = 3
	unschedulableAnswer    = 1
)

// Writing. Scalars at their zero value are left out, as proto3 does.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendInt(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendMessage writes m as an embedded message.
func appendMessage(b []byte, num protowire.Number, m message) ([]byte, error) {
	inner, err := m.appendTo(nil)
	if err != nil {
		return nil, err
	}
	return appendBytes(b, num, inner), nil
}

// kubeMessage is a Kubernetes API type with its generated protobuf methods.
type kubeMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

func appendKube(b []byte, num protowire.Number, m kubeMessage) ([]byte, error) {
	inner, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	return appendBytes(b, num, inner), nil
}

func appendStringMap(b []byte, num protowire.Number, m map[string]string) []byte {
	for k, v := range m {
		var entry []byte
		entry = appendString(entry, 1, k)
		entry = appendString(entry, 2, v)
		b = appendBytes(b, num, entry)
	}
	return b
}

// appendResources writes a map<string, bytes> whose values are serialized
// resource.Quantity objects.
func appendResources(b []byte, num protowire.Number, list corev1.ResourceList) ([]byte, error) {
	for name, q := range list {
		value, err := q.Marshal()
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", name, err)
		}
		var entry []byte
		entry = appendString(entry, 1, string(name))
		entry = appendBytes(entry, 2, value)
		b = appendBytes(b, num, entry)
	}
	return b, nil
}

// Reading.

// fields calls each for every field of b; each returns whether it took the
// field, and unknown fields are skipped, as protobuf readers do.
func fields(b []byte, each func(num protowire.Number, typ protowire.Type, b []byte) (int, error)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		used, err := each(num, typ, b)
		if err != nil {
			return fmt.Errorf("field %d: %w", num, err)
		}
		if used == 0 {
			used = protowire.ConsumeFieldValue(num, typ, b)
			if used < 0 {
				return protowire.ParseError(used)
			}
		}
		b = b[used:]
	}
	return nil
}

// bytesField reads a length-delimited value, refusing another wire type.
func bytesField(typ protowire.Type, b []byte) ([]byte, int, error) {
	if typ != protowire.BytesType {
		return nil, 0, fmt.Errorf("wire type %d, want length-delimited", typ)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, protowire.ParseError(n)
	}
	return v, n, nil
}

func varintField(typ protowire.Type, b []byte) (uint64, int, error) {
	if typ != protowire.VarintType {
		return 0, 0, fmt.Errorf("wire type %d, want varint", typ)
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, protowire.ParseError(n)
	}
	return v, n, nil
}

func stringField(typ protowire.Type, b []byte, into *string) (int, error) {
	v, n, err := bytesField(typ, b)
	if err != nil {
		return 0, err
	}
	*into = string(v)
	return n, nil
}

func int32Field(typ protowire.Type, b []byte, into *int32) (int, error) {
	v, n, err := varintField(typ, b)
	if err != nil {
		return 0, err
	}
	*into = int32(v)
	return n, nil
}

func messageField(typ protowire.Type, b []byte, into message) (int, error) {
	v, n, err := bytesField(typ, b)
	if err != nil {
		return 0, err
	}
	return n, into.parse(v)
}

// mapEntry reads one entry of a map field: its key and raw value.
func mapEntry(typ protowire.Type, b []byte) (key string, value []byte, n int, err error) {
	entry, n, err := bytesField(typ, b)
	if err != nil {
		return "", nil, 0, err
	}
	err = fields(entry, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return stringField(typ, b, &key)
		case 2:
			v, used, err := bytesField(typ, b)
			value = v
			return used, err
		}
		return 0, nil
	})
	return key, value, n, err
}

func stringMapField(typ protowire.Type, b []byte, into *map[string]string) (int, error) {
	key, value, n, err := mapEntry(typ, b)
	if err != nil {
		return 0, err
	}
	if *into == nil {
		*into = map[string]string{}
	}
	(*into)[key] = string(value)
	return n, nil
}

func resourceField(typ protowire.Type, b []byte, into *corev1.ResourceList) (int, error) {
	key, value, n, err := mapEntry(typ, b)
	if err != nil {
		return 0, err
	}
	var q resource.Quantity
	if err := q.Unmarshal(value); err != nil {
		return 0, fmt.Errorf("resource %s: %w", key, err)
	}
	if *into == nil {
		*into = corev1.ResourceList{}
	}
	(*into)[corev1.ResourceName(key)] = q
	return n, nil
}

func kubeField(typ protowire.Type, b []byte, into kubeMessage) (int, error) {
	v, n, err := bytesField(typ, b)
	if err != nil {
		return 0, err
	}
	return n, into.Unmarshal(v)
}

// NodeClaim

func (c *NodeClaim) appendTo(b []byte) ([]byte, error) {
	var err error
	if c.NodeAffinity != nil {
		if b, err = appendKube(b, nodeClaimNodeAffinityBytes, c.NodeAffinity); err != nil {
			return nil, fmt.Errorf("nodeAffinity: %w", err)
		}
	}
	b = appendStringMap(b, nodeClaimNodeSelector, c.NodeSelector)
	for i := range c.Tolerations {
		if b, err = appendKube(b, nodeClaimTolerationsBytes, &c.Tolerations[i]); err != nil {
			return nil, fmt.Errorf("tolerations[%d]: %w", i, err)
		}
	}
	return b, nil
}

func (c *NodeClaim) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case nodeClaimNodeAffinityOld, nodeClaimNodeAffinityBytes:
			c.NodeAffinity = &corev1.NodeSelector{}
			return kubeField(typ, b, c.NodeAffinity)
		case nodeClaimNodeSelector:
			return stringMapField(typ, b, &c.NodeSelector)
		case nodeClaimTolerationsOld, nodeClaimTolerationsBytes:
			var t corev1.Toleration
			n, err := kubeField(typ, b, &t)
			c.Tolerations = append(c.Tolerations, t)
			return n, err
		}
		return 0, nil
	})
}

// ReplicaRequirements

func (r *ReplicaRequirements) appendTo(b []byte) ([]byte, error) {
	var err error
	if r.NodeClaim != nil {
		if b, err = appendMessage(b, replicaNodeClaim, r.NodeClaim); err != nil {
			return nil, fmt.Errorf("nodeClaim: %w", err)
		}
	}
	b = appendString(b, replicaNamespace, r.Namespace)
	b = appendString(b, replicaPriorityClassName, r.PriorityClassName)
	if b, err = appendResources(b, replicaResourceRequest, r.ResourceRequest); err != nil {
		return nil, fmt.Errorf("resourceRequest: %w", err)
	}
	return b, nil
}

func (r *ReplicaRequirements) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case replicaNodeClaim:
			r.NodeClaim = &NodeClaim{}
			return messageField(typ, b, r.NodeClaim)
		case replicaResourceRequestOld, replicaResourceRequest:
			return resourceField(typ, b, &r.ResourceRequest)
		case replicaNamespace:
			return stringField(typ, b, &r.Namespace)
		case replicaPriorityClassName:
			return stringField(typ, b, &r.PriorityClassName)
		}
		return 0, nil
	})
}

// ComponentReplicaRequirements

func (r *ComponentReplicaRequirements) appendTo(b []byte) ([]byte, error) {
	var err error
	if r.NodeClaim != nil {
		if b, err = appendMessage(b, componentReqNodeClaim, r.NodeClaim); err != nil {
			return nil, fmt.Errorf("nodeClaim: %w", err)
		}
	}
	b = appendString(b, componentReqPriorityClassName, r.PriorityClassName)
	if b, err = appendResources(b, componentReqResourceRequest, r.ResourceRequest); err != nil {
		return nil, fmt.Errorf("resourceRequest: %w", err)
	}
	return b, nil
}

func (r *ComponentReplicaRequirements) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case componentReqNodeClaim:
			r.NodeClaim = &NodeClaim{}
			return messageField(typ, b, r.NodeClaim)
		case componentReqResourceRequestOld, componentReqResourceRequest:
			return resourceField(typ, b, &r.ResourceRequest)
		case componentReqPriorityClassName:
			return stringField(typ, b, &r.PriorityClassName)
		}
		return 0, nil
	})
}

// Component

func (c *Component) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, componentName, c.Name)
	b, err := appendMessage(b, componentRequirements, &c.ReplicaRequirements)
	if err != nil {
		return nil, fmt.Errorf("replicaRequirements: %w", err)
	}
	return appendInt(b, componentReplicas, int64(c.Replicas)), nil
}

func (c *Component) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case componentName:
			return stringField(typ, b, &c.Name)
		case componentRequirements:
			return messageField(typ, b, &c.ReplicaRequirements)
		case componentReplicas:
			return int32Field(typ, b, &c.Replicas)
		}
		return 0, nil
	})
}

func appendComponents(b []byte, num protowire.Number, components []Component) ([]byte, error) {
	var err error
	for i := range components {
		if b, err = appendMessage(b, num, &components[i]); err != nil {
			return nil, fmt.Errorf("components[%d]: %w", i, err)
		}
	}
	return b, nil
}

func componentField(typ protowire.Type, b []byte, into *[]Component) (int, error) {
	var c Component
	n, err := messageField(typ, b, &c)
	*into = append(*into, c)
	return n, err
}

// AssumedWorkload

func (w *AssumedWorkload) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, assumedNamespace, w.Namespace)
	return appendComponents(b, assumedComponents, w.Components)
}

func (w *AssumedWorkload) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case assumedNamespace:
			return stringField(typ, b, &w.Namespace)
		case assumedComponents:
			return componentField(typ, b, &w.Components)
		}
		return 0, nil
	})
}

func appendAssumed(b []byte, num protowire.Number, workloads []AssumedWorkload) ([]byte, error) {
	var err error
	for i := range workloads {
		if b, err = appendMessage(b, num, &workloads[i]); err != nil {
			return nil, fmt.Errorf("assumedWorkloads[%d]: %w", i, err)
		}
	}
	return b, nil
}

func assumedField(typ protowire.Type, b []byte, into *[]AssumedWorkload) (int, error) {
	var w AssumedWorkload
	n, err := messageField(typ, b, &w)
	*into = append(*into, w)
	return n, err
}

// MaxAvailableReplicas

func (r *MaxAvailableReplicasRequest) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, maxReplicasCluster, r.Cluster)
	b, err := appendMessage(b, maxReplicasRequirements, &r.ReplicaRequirements)
	if err != nil {
		return nil, fmt.Errorf("replicaRequirements: %w", err)
	}
	return appendAssumed(b, maxReplicasAssumed, r.AssumedWorkloads)
}

func (r *MaxAvailableReplicasRequest) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case maxReplicasCluster:
			return stringField(typ, b, &r.Cluster)
		case maxReplicasRequirements:
			return messageField(typ, b, &r.ReplicaRequirements)
		case maxReplicasAssumed:
			return assumedField(typ, b, &r.AssumedWorkloads)
		}
		return 0, nil
	})
}

func (r *MaxAvailableReplicasResponse) appendTo(b []byte) ([]byte, error) {
	return appendInt(b, maxReplicasAnswer, int64(r.MaxReplicas)), nil
}

func (r *MaxAvailableReplicasResponse) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num == maxReplicasAnswer {
			return int32Field(typ, b, &r.MaxReplicas)
		}
		return 0, nil
	})
}

// MaxAvailableComponentSets

func (r *MaxAvailableComponentSetsRequest) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, setsCluster, r.Cluster)
	b, err := appendComponents(b, setsComponents, r.Components)
	if err != nil {
		return nil, err
	}
	b = appendString(b, setsNamespace, r.Namespace)
	return appendAssumed(b, setsAssumed, r.AssumedWorkloads)
}

func (r *MaxAvailableComponentSetsRequest) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case setsCluster:
			return stringField(typ, b, &r.Cluster)
		case setsComponents:
			return componentField(typ, b, &r.Components)
		case setsNamespace:
			return stringField(typ, b, &r.Namespace)
		case setsAssumed:
			return assumedField(typ, b, &r.AssumedWorkloads)
		}
		return 0, nil
	})
}

func (r *MaxAvailableComponentSetsResponse) appendTo(b []byte) ([]byte, error) {
	return appendInt(b, setsAnswer, int64(r.MaxSets)), nil
}

func (r *MaxAvailableComponentSetsResponse) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num == setsAnswer {
			return int32Field(typ, b, &r.MaxSets)
		}
		return 0, nil
	})
}

// GetUnschedulableReplicas

func (r *ObjectReference) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, refAPIVersion, r.APIVersion)
	b = appendString(b, refKind, r.Kind)
	b = appendString(b, refNamespace, r.Namespace)
	return appendString(b, refName, r.Name), nil
}

func (r *ObjectReference) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case refAPIVersion:
			return stringField(typ, b, &r.APIVersion)
		case refKind:
			return stringField(typ, b, &r.Kind)
		case refNamespace:
			return stringField(typ, b, &r.Namespace)
		case refName:
			return stringField(typ, b, &r.Name)
		}
		return 0, nil
	})
}

func (r *UnschedulableReplicasRequest) appendTo(b []byte) ([]byte, error) {
	b = appendString(b, unschedulableCluster, r.Cluster)
	b, err := appendMessage(b, unschedulableResource, &r.Resource)
	if err != nil {
		return nil, err
	}
	return appendInt(b, unschedulableThreshold, int64(r.UnschedulableThreshold)), nil
}

func (r *UnschedulableReplicasRequest) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case unschedulableCluster:
			return stringField(typ, b, &r.Cluster)
		case unschedulableResource:
			return messageField(typ, b, &r.Resource)
		case unschedulableThreshold:
			v, n, err := varintField(typ, b)
			r.UnschedulableThreshold = time.Duration(int64(v))
			return n, err
		}
		return 0, nil
	})
}

func (r *UnschedulableReplicasResponse) appendTo(b []byte) ([]byte, error) {
	return appendInt(b, unschedulableAnswer, int64(r.UnschedulableReplicas)), nil
}

func (r *UnschedulableReplicasResponse) parse(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num == unschedulableAnswer {
			return int32Field(typ, b, &r.UnschedulableReplicas)
		}
		return 0, nil
	})
}
