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
// +kubebuilder:resource:path=multiclusterservices,scope=Namespaced,shortName=mcs,categories=karmada

// MultiClusterService exposes the Service of the same name and namespace
// beyond one cluster: to clients in other member clusters (CrossCluster) or
// through an external load balancer (LoadBalancer). Services of that name in
// different members are taken as one service.
type MultiClusterService struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; the name is the Service's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how and where the service is exposed.
	// +required
	Spec MultiClusterServiceSpec `json:"spec"`

	// status is the exposed service's state, in the shape of a Service's.
	// +optional
	Status corev1.ServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceSpec says how and where a service is exposed.
type MultiClusterServiceSpec struct {
	// types are the ways the service is exposed: CrossCluster or
	// LoadBalancer, one of them. Immutable.
	// +kubebuilder:validation:XValidation:rule="self.all(t, t == 'CrossCluster' || t == 'LoadBalancer')",message="types must be CrossCluster or LoadBalancer"
	// +required
	Types []ExposureType `json:"types"`

	// ports are the ports of the Service that are exposed; unset exposes
	// them all.
	// +optional
	Ports []ExposurePort `json:"ports,omitempty"`

	// range lists the clusters the service is exposed in, for CrossCluster.
	// Deprecated: use providerClusters and consumerClusters.
	// +optional
	Range ExposureRange `json:"range,omitempty"`

	// serviceProvisionClusters are the clusters whose endpoints back the
	// service. Deprecated: use providerClusters.
	// +optional
	ServiceProvisionClusters []string `json:"serviceProvisionClusters,omitempty"`

	// serviceConsumptionClusters are the clusters the service is exposed to.
	// Deprecated: use consumerClusters.
	// +optional
	ServiceConsumptionClusters []string `json:"serviceConsumptionClusters,omitempty"`

	// providerClusters are the clusters whose endpoints back the service;
	// unset means every cluster.
	// +optional
	ProviderClusters []ClusterSelector `json:"providerClusters,omitempty"`

	// consumerClusters are the clusters whose clients reach the service;
	// unset means every cluster.
	// +optional
	ConsumerClusters []ClusterSelector `json:"consumerClusters,omitempty"`
}

// ExposureType is one way of exposing a service.
type ExposureType string

// Exposure types. The schema leaves the list open, as Karmada's does; the
// webhook and a CEL rule refuse other values.
const (
	// ExposureTypeCrossCluster makes the service reachable from the other
	// member clusters.
	ExposureTypeCrossCluster ExposureType = "CrossCluster"

	// ExposureTypeLoadBalancer exposes the service through an external load
	// balancer.
	ExposureTypeLoadBalancer ExposureType = "LoadBalancer"
)

// ExposurePort is one exposed port of the Service.
type ExposurePort struct {
	// name is the port's name in the Service.
	// +optional
	Name string `json:"name,omitempty"`

	// port is the port's number in the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
}

// ExposureRange lists clusters by name.
type ExposureRange struct {
	// clusterNames are the selected member clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// ClusterSelector selects one member cluster.
type ClusterSelector struct {
	// name is the member cluster's name.
	// +required
	Name string `json:"name"`
}

// +kubebuilder:object:root=true

// MultiClusterServiceList is a list of MultiClusterService.
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MultiClusterService objects.
	Items []MultiClusterService `json:"items"`
}
