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
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=multiclusteringresses,scope=Namespaced,shortName=mci,categories=karmada

// MultiClusterIngress is an Ingress for the whole federation: its rules route
// to Services wherever they run among the member clusters. Spec and status
// have the shape of an Ingress's (networking.k8s.io/v1).
type MultiClusterIngress struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired routing, as in an Ingress.
	// +optional
	Spec networkingv1.IngressSpec `json:"spec,omitempty"`

	// status is the load balancer's state and where the backends run.
	// +optional
	Status MultiClusterIngressStatus `json:"status,omitempty"`
}

// MultiClusterIngressStatus is an Ingress's status plus where the backend
// Services are.
type MultiClusterIngressStatus struct {
	// IngressStatus gives loadBalancer, as in an Ingress.
	networkingv1.IngressStatus `json:",inline"`

	// trafficBlockClusters are the clusters whose backend addresses the load
	// balancer must leave out.
	// +optional
	TrafficBlockClusters []string `json:"trafficBlockClusters,omitempty"`

	// serviceLocations are, per backend Service, the clusters it runs in.
	// +optional
	ServiceLocations []ServiceLocation `json:"serviceLocations,omitempty"`
}

// ServiceLocation is the clusters one backend Service runs in.
type ServiceLocation struct {
	// name of the Service, in the ingress's namespace.
	// +required
	Name string `json:"name"`

	// clusters the Service runs in.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// +kubebuilder:object:root=true

// MultiClusterIngressList is a list of MultiClusterIngress.
type MultiClusterIngressList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MultiClusterIngress objects.
	Items []MultiClusterIngress `json:"items"`
}
