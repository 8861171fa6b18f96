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

// Labels the webhook writes on MultiClusterServices.
const (
	// MultiClusterServicePermanentIDLabel holds an id given to a
	// MultiClusterService once and kept for its life; the resources derived
	// from it are found by this id, which survives a backup restored into
	// another control plane, unlike the object's UID.
	MultiClusterServicePermanentIDLabel = "multiclusterservice.karmada.io/permanent-id"
)

// Annotations, conditions and finalizers of the MultiClusterService flow,
// Karmada's.
const (
	// MultiClusterServiceNameAnnotation and
	// MultiClusterServiceNamespaceAnnotation, on a Service taken by a
	// MultiClusterService and on its ResourceBinding, name the
	// MultiClusterService.
	MultiClusterServiceNameAnnotation      = "multiclusterservice.karmada.io/name"
	MultiClusterServiceNamespaceAnnotation = "multiclusterservice.karmada.io/namespace"

	// MCSServiceAppliedConditionType is True once the Service is
	// propagated to the provider and consumer clusters.
	MCSServiceAppliedConditionType = "ServiceApplied"
	// Reasons of the ServiceApplied condition.
	MCSServiceAppliedSucceed = "ServiceAppliedSucceed"
	MCSServiceAppliedFailed  = "ServiceAppliedFailed"

	// MCSControllerFinalizer keeps a MultiClusterService until its Service
	// is released and its Works in provider clusters are deleted.
	MCSControllerFinalizer = "karmada.io/multiclusterservice-controller"
	// MCSEndpointSliceDispatchControllerFinalizer keeps an EndpointSlice
	// Work collected for a MultiClusterService until the Works dispatching
	// it to consumer clusters are deleted.
	MCSEndpointSliceDispatchControllerFinalizer = "karmada.io/mcs-endpointslice-dispatch-controller"
)
