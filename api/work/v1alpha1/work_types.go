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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Work holds the manifests rendered for one member cluster. It lives in the
// member's execution namespace (karmada-es-<cluster>); the execution
// controller (push) or the agent (pull) applies the manifests and reports back
// in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,path=works,shortName=wk,categories=karmada
// +kubebuilder:printcolumn:name="WORKLOAD-KIND",type=string,JSONPath=`.spec.workload.manifests[*].kind`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the manifests to apply in the member.
	// +required
	Spec WorkSpec `json:"spec"`

	// status reports what happened to the manifests in the member.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec is what to apply in the member and how.
type WorkSpec struct {
	// workload holds the manifests.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// suspendDispatching, when true, stops applying this Work to the member
	// (changes queue up in the control plane) until it is set back to false.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`

	// preserveResourcesOnDeletion, when true, leaves the member's objects in
	// place when this Work is deleted (they are only unmarked as managed).
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate is the list of objects of a Work.
type WorkloadTemplate struct {
	// manifests are the complete objects to create or update in the member.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one complete Kubernetes object. It is kept verbatim (any kind,
// any fields); the API server still checks that it carries apiVersion and kind
// and that its metadata is well-formed.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XEmbeddedResource
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// WorkStatus reports the state of a Work's manifests in the member.
type WorkStatus struct {
	// conditions: Applied (every manifest applied), Progressing, Available,
	// Degraded, and Dispatching (False while spec.suspendDispatching is true).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// manifestStatuses holds, per applied manifest, the member object's status
	// and health.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ManifestStatus is the observed state of one manifest in the member.
type ManifestStatus struct {
	// identifier says which manifest this is.
	// +required
	Identifier ResourceIdentifier `json:"identifier"`

	// status is the member object's status as reflected by the resource
	// interpreter (InterpretStatus).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// health is the member object's health as judged by the resource
	// interpreter (InterpretHealth).
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceIdentifier names one manifest of a Work and the object it became.
type ResourceIdentifier struct {
	// ordinal is the manifest's index in spec.workload.manifests.
	// +kubebuilder:validation:Minimum=0
	// +required
	Ordinal int `json:"ordinal"`

	// group of the object; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`

	// version of the object.
	// +required
	Version string `json:"version"`

	// kind of the object.
	// +required
	Kind string `json:"kind"`

	// resource is the plural resource name of the kind.
	// +required
	Resource string `json:"resource"`

	// namespace of the object; empty when cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the object.
	// +required
	Name string `json:"name"`
}

// ResourceHealth is the health of a member object as judged by the resource
// interpreter.
// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
type ResourceHealth string

const (
	// ResourceHealthy: the object does what it should (e.g. all replicas available).
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy: the object exists but does not work.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown: health could not be interpreted.
	ResourceUnknown ResourceHealth = "Unknown"
)

// WorkList is a list of Works.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Works.
	Items []Work `json:"items"`
}
