/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories=karmada
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceBinding ties one namespaced resource template to its placement and
// records where the scheduler put it. The detector writes the spec, the
// scheduler writes spec.clusters, the status controllers write the status.
type ResourceBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template, its requirements and the scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// status is the scheduling and propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceBindingList is a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ResourceBinding objects.
	Items []ResourceBinding `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=clusterresourcebindings,scope=Cluster,shortName=crb,categories=karmada
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceBinding is the binding of a cluster-scoped template, or of a
// namespaced template claimed by a ClusterPropagationPolicy.
type ClusterResourceBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template, its requirements and the scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// status is the scheduling and propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceBindingList is a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterResourceBinding objects.
	Items []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is shared by ResourceBinding and ClusterResourceBinding.
type ResourceBindingSpec struct {
	// resource is the template this binding propagates.
	// +required
	Resource ObjectReference `json:"resource"`

	// propagateDeps makes the template's dependencies follow it to the same
	// clusters, copied from the policy.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// replicaRequirements is what one replica needs, for single-component
	// workloads; the scheduler checks cluster capacity against it.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// replicas is the template's desired replica count.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// components describe multi-component workloads (e.g. a job with a
	// leader and workers) part by part, replacing replicas and
	// replicaRequirements for them.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, d.name == c.name))",message="components: name must be unique"
	// +optional
	Components []Component `json:"components,omitempty"`

	// clusters is the scheduling result: the clusters chosen and their
	// replicas.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// placement is the placement of the claiming policy.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// gracefulEvictionTasks are clusters the workload is being evicted from;
	// their copies are kept until the replacement is healthy or the task
	// times out.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// requiredBy lists the bindings that depend on this one (propagateDeps),
	// with their scheduling results, so this one follows them.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// schedulerName is the scheduler responsible for this binding.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// failover is the failover behaviour of the claiming policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// conflictResolution is how existing member resources are handled, from
	// the policy or the template's annotation.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// rescheduleTriggeredAt asks for a fresh schedule when later than
	// status.lastScheduledTime (set by WorkloadRebalancer).
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// suspension pauses scheduling or dispatching of this binding.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// preserveResourcesOnDeletion keeps member resources when the template is
	// deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// schedulePriority orders this binding in the scheduling queue.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// workloadAffinityGroups are the groups the template belongs to, resolved
	// from the policy's workloadAffinity and the template's labels.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference identifies the resource template of a binding.
type ObjectReference struct {
	// apiVersion of the template.
	// +kubebuilder:validation:MinLength=1
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the template.
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// namespace of the template; empty for cluster-scoped templates.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the template.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// uid of the template.
	// +optional
	UID types.UID `json:"uid,omitempty"`

	// resourceVersion of the template the binding was last built from.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements is what one replica of a workload needs.
type ReplicaRequirements struct {
	// nodeClaim is the node constraints of a replica's pod.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// resourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// namespace of the workload, for per-namespace quota checks in members.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// priorityClassName of the replica's pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// ComponentReplicaRequirements is what one replica of a component needs.
type ComponentReplicaRequirements struct {
	// nodeClaim is the node constraints of a replica's pod.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// resourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// priorityClassName of the replica's pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node-level constraints of a replica's pod, so estimators
// count only nodes that could run it.
type NodeClaim struct {
	// hardNodeAffinity is the pod's required node affinity.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`

	// nodeSelector is the pod's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations are the pod's tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is one part of a multi-component workload.
type Component struct {
	// name identifies the component within the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// replicas is the component's replica count.
	// +kubebuilder:validation:Minimum=0
	// +required
	Replicas int32 `json:"replicas"`

	// replicaRequirements is what one replica of the component needs.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// TargetCluster is one cluster of a scheduling result.
type TargetCluster struct {
	// name of the member cluster.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// replicas assigned to the cluster.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// components are the replicas of each component assigned to the cluster,
	// for multi-component workloads.
	// +optional
	Components []ComponentReplicas `json:"components,omitempty"`
}

// ComponentReplicas is the replica count of one component in one cluster.
type ComponentReplicas struct {
	// name of the component.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// replicas of the component in the cluster.
	// +kubebuilder:validation:Minimum=0
	// +required
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask keeps a workload's copy in a cluster it is being
// evicted from until the replacement is up.
type GracefulEvictionTask struct {
	// fromCluster is the cluster being evicted from.
	// +kubebuilder:validation:MinLength=1
	// +required
	FromCluster string `json:"fromCluster"`

	// purgeMode says how the evicted copy is removed.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +optional
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// replicas the evicted cluster had; absent for non-workloads.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// reason is a CamelCase reason for the eviction, e.g. TaintUntolerated.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +required
	Reason string `json:"reason"`

	// message explains the eviction to humans.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// producer is the controller that created the task, e.g. TaintManager
	// or resource-binding-application-failover-controller.
	// +kubebuilder:validation:MinLength=1
	// +required
	Producer string `json:"producer"`

	// gracePeriodSeconds is how long the evicted copy is kept at most; absent
	// means the controller's default.
	// +kubebuilder:validation:Minimum=0
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// suppressDeletion true keeps the evicted copy until set false, for
	// manual confirmation.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// preservedLabelState are labels carried to the replacement, from the
	// policy's statePreservation rules.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// clustersBeforeFailover are the clusters the workload was on before the
	// eviction.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`

	// creationTimestamp is when the task was created; grace periods count
	// from it.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is a dependent binding and its scheduling result.
type BindingSnapshot struct {
	// namespace of the dependent binding; empty for a ClusterResourceBinding.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the dependent binding.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// clusters is the dependent binding's scheduling result.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension pauses scheduling or dispatching of a binding.
type Suspension struct {
	// Suspension holds the dispatching switches shared with policies.
	policyv1alpha1.Suspension `json:",inline"`

	// scheduling true stops the scheduler from changing this binding.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the resolved scheduling priority of a binding.
type SchedulePriority struct {
	// priority orders bindings in the scheduling queue; higher goes first.
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the affinity groups a template belongs to.
type WorkloadAffinityGroups struct {
	// affinityGroup is the group whose members share clusters.
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`

	// antiAffinityGroup is the group whose members avoid sharing clusters.
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ResourceBindingStatus is the scheduling and propagation state of a binding.
type ResourceBindingStatus struct {
	// schedulerObservedGeneration is the generation the scheduler last acted
	// on.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// schedulerObservingAffinityName is the clusterAffinities term the last
	// schedule used.
	// +optional
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// lastScheduledTime is when the binding was last scheduled.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// conditions are Scheduled and FullyApplied.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// aggregatedStatus is the status of the resource in each cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceHealth is the interpreted health of a resource in a member.
type ResourceHealth string

// Resource health values.
const (
	ResourceHealthy   ResourceHealth = "Healthy"
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	ResourceUnknown   ResourceHealth = "Unknown"
)

// AggregatedStatusItem is the state of the resource in one member cluster.
type AggregatedStatusItem struct {
	// clusterName is the member cluster.
	// +kubebuilder:validation:MinLength=1
	// +required
	ClusterName string `json:"clusterName"`

	// status is the resource's status reflected from the member.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// applied says whether the manifest was applied in the member.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// appliedMessage explains a failed apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`

	// health is the resource's health in the member.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}
