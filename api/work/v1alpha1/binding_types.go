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
	"k8s.io/apimachinery/pkg/runtime"
)

// The v1alpha1 bindings are still served so that old clients keep working;
// v1alpha2 (api/work/v1alpha2) is the storage version and what controllers use.

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories=karmada
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceBinding is the v1alpha1 form of a binding of a namespaced template.
type ResourceBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template and the scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// status is the propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceBindingList is a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterresourcebindings,scope=Cluster,shortName=crb,categories=karmada
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceBinding is the v1alpha1 form of a cluster-scoped binding.
type ClusterResourceBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template and the scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// status is the propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceBindingList is a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is the v1alpha1 binding spec.
type ResourceBindingSpec struct {
	// resource is the template, with its replicas and per-replica resources.
	// +required
	Resource ObjectReference `json:"resource"`

	// clusters is the scheduling result.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// ObjectReference identifies the template of a v1alpha1 binding and carries
// its replica requirements (moved to the spec in v1alpha2).
type ObjectReference struct {
	// apiVersion of the template.
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the template.
	// +required
	Kind string `json:"kind"`

	// namespace of the template; empty for cluster-scoped templates.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the template.
	// +required
	Name string `json:"name"`

	// resourceVersion of the template the binding was built from.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`

	// replicas is the template's desired replica count.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// resourcePerReplicas is the resources one replica requests.
	// +optional
	ReplicaResourceRequirements corev1.ResourceList `json:"resourcePerReplicas,omitempty"`
}

// TargetCluster is one cluster of a v1alpha1 scheduling result.
type TargetCluster struct {
	// name of the member cluster.
	// +required
	Name string `json:"name"`

	// replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// ResourceBindingStatus is the v1alpha1 binding status.
type ResourceBindingStatus struct {
	// conditions of the binding.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// aggregatedStatus is the status of the resource in each cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// AggregatedStatusItem is the state of the resource in one member cluster.
type AggregatedStatusItem struct {
	// clusterName is the member cluster.
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
}
