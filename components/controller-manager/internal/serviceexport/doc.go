// Package serviceexport is the service-export controller: it collects the
// EndpointSlices of exported Services from the member clusters into the
// control plane, as Karmada's does.
//
// A ServiceExport reaches a member in a Work, with its Service. Once such a
// Work is applied, the controller watches the member's ServiceExports and
// EndpointSlices through the member informers of internal/membercluster.
// For every Service of a member that has a ServiceExport, each of its
// EndpointSlices (kubernetes.io/service-name) is copied into a Work in the
// member's execution namespace, named as the Work of that EndpointSlice
// would be, suspended (spec.suspendDispatching: it is never applied
// anywhere) and labelled endpointslice.karmada.io/namespace and
// endpointslice.karmada.io/name with the Service, and
// endpointslice.karmada.io/managed-by with ServiceExport. The endpointslice
// controller turns those Works into EndpointSlices of the control plane.
//
// The controller is level-based, one reconcile per Service of a member: it
// compares the member's EndpointSlices of the Service with the collected
// Works and writes the difference, so slices that come and go with pods,
// and an export that goes, are followed. A Work also collected for a
// MultiClusterService loses only this controller's part of its labels.
// EndpointSlices the control plane put into the member itself (annotated
// with their Work, or dispatched by the endpointslice-dispatch controller)
// are never collected back. Only Push members are watched: the control
// plane cannot reach a Pull member.
package serviceexport
