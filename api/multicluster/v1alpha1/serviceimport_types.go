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
// +kubebuilder:resource:path=serviceimports,scope=Namespaced,shortName=svcim

// ServiceImport describes a service exported from other clusters, as it is
// consumed in the clusters the ServiceImport is propagated to: there the
// clients find it as the Service derived-<name>, whose EndpointSlices list
// the endpoints of every exporting cluster.
type ServiceImport struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; the name is the exported
	// Service's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the imported service.
	// +optional
	Spec ServiceImportSpec `json:"spec,omitempty"`

	// status is the state of the import.
	// +optional
	Status ServiceImportStatus `json:"status,omitempty"`
}

// ServiceImportType is how an imported service is reached.
// +kubebuilder:validation:Enum=ClusterSetIP;Headless
type ServiceImportType string

// Service import types.
const (
	// ClusterSetIP: the service is reached through a virtual IP, as a
	// ClusterIP Service; only these are derived into member Services.
	ClusterSetIP ServiceImportType = "ClusterSetIP"
	// Headless: the service's endpoints are reached directly.
	Headless ServiceImportType = "Headless"
)

// ServiceImportSpec describes an imported service.
type ServiceImportSpec struct {
	// ports are the ports of the service.
	// +listType=atomic
	// +required
	Ports []ServicePort `json:"ports"`

	// ips are the virtual IPs of the service in the cluster set, for
	// ClusterSetIP.
	// +kubebuilder:validation:MaxItems:=1
	// +optional
	IPs []string `json:"ips,omitempty"`

	// type is how the service is reached: ClusterSetIP or Headless.
	// +required
	Type ServiceImportType `json:"type"`

	// sessionAffinity is ClientIP to keep a client's connections on one
	// endpoint, or None; as a Service's.
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`

	// sessionAffinityConfig configures the ClientIP session affinity.
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
}

// ServicePort is one port of an imported service.
type ServicePort struct {
	// name is the port's name, unique among the service's ports; optional
	// when the service has one port.
	// +optional
	Name string `json:"name,omitempty"`

	// protocol is TCP, UDP or SCTP; TCP when unset.
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`

	// appProtocol is the application protocol of the port, as a
	// ServicePort's appProtocol.
	// +optional
	AppProtocol *string `json:"appProtocol,omitempty"`

	// port is the port number the service is reached on.
	// +required
	Port int32 `json:"port"`
}

// ServiceImportStatus is the state of a ServiceImport.
type ServiceImportStatus struct {
	// clusters are the clusters that export the service.
	// +listType=map
	// +listMapKey=cluster
	// +optional
	Clusters []ClusterStatus `json:"clusters,omitempty"`
}

// ClusterStatus names one cluster that exports a service.
type ClusterStatus struct {
	// cluster is the name of the exporting cluster.
	// +required
	Cluster string `json:"cluster"`
}

// +kubebuilder:object:root=true

// ServiceImportList is a list of ServiceImport.
type ServiceImportList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ServiceImport objects.
	Items []ServiceImport `json:"items"`
}
