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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=propagationpolicies,scope=Namespaced,shortName=pp,categories=karmada

// PropagationPolicy selects resource templates in its own namespace and says
// which member clusters they are propagated to and how replicas are spread.
type PropagationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired propagation.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// PropagationPolicyList is a list of PropagationPolicy.
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the PropagationPolicy objects.
	Items []PropagationPolicy `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterpropagationpolicies,scope=Cluster,shortName=cpp,categories=karmada

// ClusterPropagationPolicy is the cluster-scoped PropagationPolicy: it can
// select cluster-scoped templates and templates in any namespace.
type ClusterPropagationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired propagation.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicy.
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterPropagationPolicy objects.
	Items []ClusterPropagationPolicy `json:"items"`
}

// PropagationSpec is shared by PropagationPolicy and ClusterPropagationPolicy.
type PropagationSpec struct {
	// resourceSelectors picks the resource templates this policy propagates.
	// A template matching any selector is claimed.
	// +kubebuilder:validation:MinItems=1
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// association is deprecated and ignored; propagateDeps replaces it. Kept
	// so that old manifests still validate.
	// +optional
	Association bool `json:"association,omitempty"`

	// propagateDeps makes the templates' dependencies (ConfigMaps, Secrets,
	// ServiceAccounts, ... found by the resource interpreter) follow them to
	// the same clusters.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// placement says which clusters the templates go to and how replicas are
	// divided among them.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// priority decides between policies matching the same template: the
	// highest wins; ties go to the policy whose selector is most specific
	// (name, then label selector, then kind), then to the name.
	// +kubebuilder:default=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// preemption allows this policy to take over templates already claimed by
	// a policy of lower priority.
	// +kubebuilder:validation:Enum=Always;Never
	// +kubebuilder:default=Never
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// dependentOverrides names OverridePolicies that must exist before the
	// templates are propagated, so a template never reaches a member
	// unmodified when overrides are expected.
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// schedulerName is the scheduler that places the templates.
	// +kubebuilder:default="default-scheduler"
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// failover configures migration of the workload away from failed
	// clusters or failed applications. Absent means no failover.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// conflictResolution says what happens when the resource already exists in
	// a member and was not created by the control plane: Abort leaves it alone
	// and reports a failure, Overwrite takes it over. A template may override
	// this with the work.karmada.io/conflict-resolution annotation.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// activationPreference Lazy defers applying changes of this policy to
	// templates until the templates themselves change. Absent means changes
	// apply at once.
	// +kubebuilder:validation:Enum=Lazy
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// suspension pauses dispatching of the templates to member clusters.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// preserveResourcesOnDeletion keeps the propagated resources in the
	// members when the template is deleted from the control plane.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// schedulePriority orders the templates' bindings in the scheduling queue.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector picks resource templates by type and, optionally, by
// namespace, name or labels.
type ResourceSelector struct {
	// apiVersion of the selected templates, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the selected templates, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// namespace of the selected templates. For namespaced policies it defaults
	// to the policy's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the selected template. Empty selects all; when set, labelSelector
	// is ignored.
	// +optional
	Name string `json:"name,omitempty"`

	// labelSelector narrows the selection by template labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldSelector picks clusters by fields of the Cluster object (provider,
// region, zone), which are not labels.
type FieldSelector struct {
	// matchExpressions are ANDed. Keys are provider, region or zone; operators
	// are In or NotIn.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.key in ['provider', 'region', 'zone'])",message="matchExpressions: key must be one of provider, region, zone"
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.operator in ['In', 'NotIn'])",message="matchExpressions: operator must be In or NotIn"
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Valid fieldSelector keys.
const (
	// ProviderField selects clusters by spec.provider.
	ProviderField = "provider"
	// RegionField selects clusters by spec.region.
	RegionField = "region"
	// ZoneField selects clusters by spec.zone (or spec.zones).
	ZoneField = "zone"
)

// ClusterAffinity picks member clusters. Every given criterion must hold;
// exclude wins over all of them.
type ClusterAffinity struct {
	// labelSelector picks clusters by their labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// fieldSelector picks clusters by provider, region or zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	// clusterNames lists the clusters to pick.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// exclude lists clusters never to pick.
	// +optional
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is one named group of candidate clusters. The scheduler
// tries the terms of clusterAffinities in order and moves to the next only
// when the current one cannot fit the workload.
type ClusterAffinityTerm struct {
	// affinityName identifies the term; unique within clusterAffinities.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	// ClusterAffinity holds the cluster criteria of the term.
	ClusterAffinity `json:",inline"`

	// overflowAffinities are extra cluster groups that take the replicas this
	// term's clusters cannot hold, tried in order, while the term stays the
	// primary placement.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	OverflowAffinities []OverflowAffinityTerm `json:"overflowAffinities,omitempty"`
}

// OverflowAffinityTerm is a named cluster group used for replicas that do not
// fit the primary term. It cannot nest further overflow groups.
type OverflowAffinityTerm struct {
	// affinityName identifies the overflow group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	// ClusterAffinity holds the cluster criteria of the term.
	ClusterAffinity `json:",inline"`
}

// Placement says where templates are propagated and how replicas are divided.
// +kubebuilder:validation:XValidation:rule="!(has(self.clusterAffinity) && has(self.clusterAffinities))",message="clusterAffinity and clusterAffinities are exclusive"
type Placement struct {
	// clusterAffinity picks the candidate clusters. Exclusive with
	// clusterAffinities.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// clusterAffinities are ordered groups of candidate clusters, tried in turn
	// (for example a primary and a backup group). Exclusive with
	// clusterAffinity.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.affinityName == a.affinityName))",message="clusterAffinities: affinityName must be unique"
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// clusterTolerations let the templates go to clusters with matching taints.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// spreadConstraints say over how many groups (clusters, regions, zones,
	// providers or label values) the templates are spread.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, has(c.spreadByField) && c.spreadByField != 'cluster') || self.exists(c, has(c.spreadByField) && c.spreadByField == 'cluster')",message="spreadConstraints: a constraint with spreadByField cluster is required when spreading by region, zone or provider"
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// replicaScheduling says how replicas are assigned to the selected
	// clusters. Absent means every cluster gets the full replica count.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// workloadAffinity keeps workloads of the same group together on the same
	// clusters (affinity) or apart (antiAffinity).
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// SpreadFieldValue is a Cluster field that clusters can be grouped by.
type SpreadFieldValue string

// Spread fields.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint bounds the number of groups the templates land in.
// +kubebuilder:validation:XValidation:rule="!(has(self.spreadByField) && has(self.spreadByLabel) && size(self.spreadByLabel) > 0)",message="spreadByField and spreadByLabel are exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.maxGroups) || self.maxGroups == 0 || !has(self.minGroups) || self.minGroups <= self.maxGroups",message="minGroups must be less than or equal to maxGroups"
type SpreadConstraint struct {
	// spreadByField groups clusters by a Cluster field. Exclusive with
	// spreadByLabel; when neither is set, clusters are the groups.
	// +kubebuilder:validation:Enum=cluster;region;zone;provider
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// spreadByLabel groups clusters by the value of this Cluster label.
	// Exclusive with spreadByField.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// maxGroups is the most groups to use; 0 means no limit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`

	// minGroups is the fewest groups to use; scheduling fails if fewer fit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType says whether replicas are copied or divided.
type ReplicaSchedulingType string

// Replica scheduling types.
const (
	// ReplicaSchedulingTypeDuplicated gives every cluster the full count.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided splits the count among the clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference says how divided replicas are split.
type ReplicaDivisionPreference string

// Replica division preferences.
const (
	// ReplicaDivisionPreferenceAggregated packs replicas into as few clusters
	// as their free capacity allows.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	// ReplicaDivisionPreferenceWeighted splits replicas by weight.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy says how replicas are assigned to clusters.
// +kubebuilder:validation:XValidation:rule="!has(self.replicaSchedulingType) || self.replicaSchedulingType != 'Divided' || has(self.replicaDivisionPreference)",message="replicaDivisionPreference is required when replicaSchedulingType is Divided"
type ReplicaSchedulingStrategy struct {
	// replicaSchedulingType is Duplicated (every cluster runs all replicas) or
	// Divided (the replicas are split among the clusters).
	// +kubebuilder:validation:Enum=Duplicated;Divided
	// +kubebuilder:default=Divided
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// replicaDivisionPreference says how Divided replicas are split: Aggregated
	// or Weighted. Required when replicaSchedulingType is Divided.
	// +kubebuilder:validation:Enum=Aggregated;Weighted
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// weightPreference gives the weights for Weighted division. Absent means
	// equal weights for all selected clusters.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// DynamicWeightFactor is a cluster property weights are computed from.
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weighs each cluster by how many replicas
// it can still hold.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// ClusterPreferences gives cluster weights, either static or computed.
// +kubebuilder:validation:XValidation:rule="!(has(self.staticWeightList) && size(self.staticWeightList) > 0 && has(self.dynamicWeight))",message="staticWeightList and dynamicWeight are exclusive"
type ClusterPreferences struct {
	// staticWeightList gives fixed weights to groups of clusters. Exclusive
	// with dynamicWeight.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// dynamicWeight computes weights from a cluster property at scheduling
	// time. Exclusive with staticWeightList.
	// +kubebuilder:validation:Enum=AvailableReplicas
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight gives a weight to the clusters it targets.
type StaticClusterWeight struct {
	// targetCluster picks the clusters that get this weight.
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`

	// weight is the relative share of replicas; at least 1.
	// +kubebuilder:validation:Minimum=1
	// +required
	Weight int64 `json:"weight"`
}

// WorkloadAffinity groups workloads by a label value and keeps each group
// together on, or apart across, clusters.
type WorkloadAffinity struct {
	// affinity places workloads of the same group on the same clusters.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`

	// antiAffinity places workloads of the same group on different clusters.
	// +optional
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm defines an affinity group by a label key.
type WorkloadAffinityTerm struct {
	// groupByLabelKey is the template label whose value names the group.
	// +kubebuilder:validation:MinLength=1
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm defines an anti-affinity group by a label key.
type WorkloadAntiAffinityTerm struct {
	// groupByLabelKey is the template label whose value names the group.
	// +kubebuilder:validation:MinLength=1
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// PreemptionBehavior says whether a policy may take over claimed templates.
type PreemptionBehavior string

// Preemption behaviors.
const (
	// PreemptAlways takes over templates claimed by lower-priority policies.
	PreemptAlways PreemptionBehavior = "Always"
	// PreemptNever leaves claimed templates alone.
	PreemptNever PreemptionBehavior = "Never"
)

// ConflictResolution says what to do with a member resource the control
// plane did not create.
type ConflictResolution string

// Conflict resolutions.
const (
	// ConflictOverwrite takes the existing resource over.
	ConflictOverwrite ConflictResolution = "Overwrite"
	// ConflictAbort leaves it and reports a failure.
	ConflictAbort ConflictResolution = "Abort"
)

// ActivationPreference says when policy changes reach claimed templates.
type ActivationPreference string

// LazyActivation applies policy changes to a template only when the template
// itself changes next.
const LazyActivation ActivationPreference = "Lazy"

// Suspension pauses parts of propagation.
type Suspension struct {
	// dispatching true stops dispatching to every member cluster.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`

	// dispatchingOnClusters stops dispatching to the listed clusters only.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists clusters dispatching is suspended for.
type SuspendClusters struct {
	// clusterNames are the clusters to suspend.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// PriorityClassSource says where a schedule priority class is looked up.
type PriorityClassSource string

// KubePriorityClass looks the class up among scheduling.k8s.io PriorityClasses
// of the control plane.
const KubePriorityClass PriorityClassSource = "KubePriorityClass"

// SchedulePriority names the priority class that orders scheduling.
type SchedulePriority struct {
	// priorityClassSource is where priorityClassName is looked up.
	// +kubebuilder:validation:Enum=KubePriorityClass
	// +required
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`

	// priorityClassName is the name of the priority class.
	// +kubebuilder:validation:MinLength=1
	// +required
	PriorityClassName string `json:"priorityClassName"`
}

// FailoverBehavior configures failover for clusters and applications.
type FailoverBehavior struct {
	// application moves the workload away from clusters where it stays
	// unhealthy.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// cluster configures what happens when a cluster fails.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// PurgeMode says how the old copy is removed when a workload is migrated.
type PurgeMode string

// Purge modes.
const (
	// PurgeModeDirectly removes the old copy at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully removes the old copy once the new one is healthy or
	// a grace period ends.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever keeps the old copy.
	PurgeModeNever PurgeMode = "Never"
)

// ApplicationFailoverBehavior configures application failover.
type ApplicationFailoverBehavior struct {
	// decisionConditions say when an application counts as failed.
	// +required
	DecisionConditions DecisionConditions `json:"decisionConditions"`

	// purgeMode says how the failed copy is removed.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// gracePeriodSeconds is how long a Gracefully purged copy is kept at most
	// while the new one comes up.
	// +kubebuilder:validation:Minimum=1
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// statePreservation carries state from the failed copy to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions say when an application counts as failed.
type DecisionConditions struct {
	// tolerationSeconds is how long the application may stay unhealthy
	// before it is moved.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=300
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// ClusterFailoverBehavior configures failover when a cluster fails.
type ClusterFailoverBehavior struct {
	// purgeMode says how the copy on the failed cluster is removed.
	// +kubebuilder:validation:Enum=Directly;Gracefully
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// statePreservation carries state from the failed copy to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// StatePreservation carries values from a failed copy to its replacement as
// labels.
type StatePreservation struct {
	// rules say which values are carried and under which label.
	// +kubebuilder:validation:MinItems=1
	// +required
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule copies one value of the failed copy into a label.
type StatePreservationRule struct {
	// aliasLabelName is the label the value is stored under on the new copy.
	// +kubebuilder:validation:MinLength=1
	// +required
	AliasLabelName string `json:"aliasLabelName"`

	// jsonPath selects the value in the failed copy's status, e.g.
	// {.replicas}.
	// +kubebuilder:validation:MinLength=1
	// +required
	JSONPath string `json:"jsonPath"`
}
