// Package multiclusterservice holds the controllers of MultiClusterServices
// of type CrossCluster, Karmada's three:
//
//   - multiclusterservice-controller takes the Service of the same name
//     from the detector (resourcetemplate.karmada.io/claimed-by:
//     MultiClusterService, which the detector's filter honours) and writes
//     its ResourceBinding, placed on the provider and consumer clusters; it
//     puts the MultiClusterService, suspended, in a Work of every Ready
//     provider cluster, which marks that cluster as one whose endpoints are
//     collected. Deleting the MultiClusterService releases the Service (the
//     binding stays, as a policy's does) and deletes those Works.
//   - endpointslice-collect-controller collects, from every provider
//     cluster holding such a Work, the EndpointSlices of the Service into
//     suspended Works of the provider's execution namespace
//     (multiclusterservice.karmada.io/namespace and name labels,
//     endpointslice.karmada.io/managed-by: MultiClusterService), following
//     them as pods come and go.
//   - endpointslice-dispatch-controller copies every collected EndpointSlice
//     into a Work of every consumer cluster but its own, as the slice
//     <provider>-<slice> of the Service, labelled
//     endpointslice.kubernetes.io/managed-by:
//     endpointslice-dispatch-controller.karmada.io so that the consumer's
//     own endpointslice controller, and collection, leave it alone; a
//     finalizer on the collected Work removes the dispatched ones with it.
//
// Consumers and providers are every cluster when the MultiClusterService
// names none. The LoadBalancer type, and MultiClusterIngress routing, are
// served by the API and validated by the webhook only.
package multiclusterservice
