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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=federatedhpas,scope=Namespaced,shortName=fhpa,categories=karmada
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="MINPODS",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MAXPODS",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// FederatedHPA scales a workload from metrics gathered in every member
// cluster it runs in: the desired replica count is computed once, for the
// whole federation, and the scheduler then divides it among the clusters as
// the workload's propagation policy says.
type FederatedHPA struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired scaling.
	// +required
	Spec FederatedHPASpec `json:"spec"`

	// status is the last observed state of the autoscaler, in the shape of a
	// HorizontalPodAutoscaler's.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status,omitempty"`
}

// FederatedHPASpec is the desired scaling of one workload. Its fields mean
// what they mean in a HorizontalPodAutoscaler (autoscaling/v2).
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="maxReplicas must be greater than or equal to minReplicas"
type FederatedHPASpec struct {
	// scaleTargetRef is the workload to scale (a resource template with a
	// scale subresource, such as a Deployment); its pods are the ones whose
	// metrics are collected.
	// +required
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// minReplicas is the fewest replicas the autoscaler scales down to.
	// Defaults to 1 (the webhook sets it); scaling to zero is not supported.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the most replicas the autoscaler scales up to; not less
	// than minReplicas.
	// +kubebuilder:validation:Minimum=1
	// +required
	MaxReplicas int32 `json:"maxReplicas"`

	// metrics are the measures the replica count follows; the largest count
	// any of them asks for wins. Each must grow smaller as replicas are
	// added. Defaults to an average CPU utilization of 80%.
	// +listType=atomic
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// behavior tunes how fast the target scales up and down. When set, the
	// directions it leaves out get Kubernetes' HorizontalPodAutoscaler
	// defaults.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// +kubebuilder:object:root=true

// FederatedHPAList is a list of FederatedHPA.
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the FederatedHPA objects.
	Items []FederatedHPA `json:"items"`
}
