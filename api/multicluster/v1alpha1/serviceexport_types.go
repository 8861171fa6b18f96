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
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=serviceexports,scope=Namespaced,shortName=svcex

// ServiceExport exports the Service of the same name and namespace, in the
// cluster it lives in, to the other clusters of the federation: the
// endpoints of that Service are collected into the control plane, from
// where ServiceImports hand them to the clusters that consume the service.
type ServiceExport struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; the name is the Service's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status is the state of the export.
	// +optional
	Status ServiceExportStatus `json:"status,omitempty"`
}

// ServiceExportStatus is the state of a ServiceExport.
type ServiceExportStatus struct {
	// conditions describe the state of the export: Valid, Conflict.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Condition types of a ServiceExport, the MCS API's.
const (
	// ServiceExportValid is True when the export is valid: its Service
	// exists and can be exported.
	ServiceExportValid = "Valid"
	// ServiceExportConflict is True when the Service's properties conflict
	// with those of the same service exported by another cluster.
	ServiceExportConflict = "Conflict"
)

// +kubebuilder:object:root=true

// ServiceExportList is a list of ServiceExport.
type ServiceExportList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ServiceExport objects.
	Items []ServiceExport `json:"items"`
}
