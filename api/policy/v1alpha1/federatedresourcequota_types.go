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
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=federatedresourcequotas,scope=Namespaced,categories=karmada
// +kubebuilder:printcolumn:name="Overall",type=string,JSONPath=`.status.overall`
// +kubebuilder:printcolumn:name="Overall_Used",type=string,JSONPath=`.status.overallUsed`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// FederatedResourceQuota limits the resources a namespace may use across all
// member clusters together, optionally with fixed shares per cluster.
type FederatedResourceQuota struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired quota.
	// +required
	Spec FederatedResourceQuotaSpec `json:"spec"`

	// status is the observed quota usage.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FederatedResourceQuotaList is a list of FederatedResourceQuota.
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the FederatedResourceQuota objects.
	Items []FederatedResourceQuota `json:"items"`
}

// FederatedResourceQuotaSpec is the desired quota.
type FederatedResourceQuotaSpec struct {
	// overall is the limit for the namespace across all clusters.
	// +required
	Overall corev1.ResourceList `json:"overall"`

	// staticAssignments give clusters fixed limits, written into them as
	// ResourceQuotas.
	// +optional
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the fixed quota of one cluster.
type StaticClusterAssignment struct {
	// clusterName is the member cluster.
	// +kubebuilder:validation:MinLength=1
	// +required
	ClusterName string `json:"clusterName"`

	// hard is the cluster's limit.
	// +required
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is the observed usage.
type FederatedResourceQuotaStatus struct {
	// overall is the enforced overall limit.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`

	// overallUsed is the usage summed over all clusters.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`

	// aggregatedStatus is the limit and usage of each cluster.
	// +optional
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is the quota limit and usage in one cluster.
type ClusterQuotaStatus struct {
	// clusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// ResourceQuotaStatus gives hard and used, as in a ResourceQuota.
	corev1.ResourceQuotaStatus `json:",inline"`
}
