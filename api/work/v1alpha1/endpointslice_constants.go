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

// Labels, annotations and finalizers of the Works that carry EndpointSlices
// collected from member clusters (suspended: they are never applied) and
// of the EndpointSlices derived from them, Karmada's.
const (
	// ServiceNamespaceLabel (label) on a collected Work is the namespace of
	// the Service whose EndpointSlice it holds.
	ServiceNamespaceLabel = "endpointslice.karmada.io/namespace"
	// ServiceNameLabel (label) on a collected Work is the name of that
	// Service.
	ServiceNameLabel = "endpointslice.karmada.io/name"
	// EndpointSliceWorkManagedByLabel (label) on a collected Work lists,
	// joined by ".", the kinds whose controllers collect it: ServiceExport,
	// MultiClusterService, or both.
	EndpointSliceWorkManagedByLabel = "endpointslice.karmada.io/managed-by"
	// EndpointSliceProvisionClusterAnnotation (annotation) on a Work that
	// dispatches an EndpointSlice to a consumer cluster names the cluster
	// the endpoints come from.
	EndpointSliceProvisionClusterAnnotation = "endpointslice.karmada.io/provision-cluster"
	// EndpointSliceDispatchControllerLabelValue is the
	// endpointslice.kubernetes.io/managed-by of EndpointSlices dispatched
	// to consumer clusters, so that nobody collects them again.
	EndpointSliceDispatchControllerLabelValue = "endpointslice-dispatch-controller.karmada.io"

	// MultiClusterServiceNamespaceLabel and MultiClusterServiceNameLabel
	// (labels) on a Work name the MultiClusterService it was made for.
	MultiClusterServiceNamespaceLabel = "multiclusterservice.karmada.io/namespace"
	MultiClusterServiceNameLabel      = "multiclusterservice.karmada.io/name"

	// EndpointSliceControllerFinalizer keeps a collected Work until the
	// EndpointSlices derived from it in the control plane are deleted.
	EndpointSliceControllerFinalizer = "karmada.io/endpointslice-controller"
)
