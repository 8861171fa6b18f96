// Package bindingstatus is the binding status controller: it brings the
// state of a binding's Works back into the binding and into its template.
//
// For every cluster where a ResourceBinding or ClusterResourceBinding
// should be (scheduled, required by a dependent, or being evicted from) it
// reads the cluster's Work and records in status.aggregatedStatus whether
// the manifest was applied (and why not), the health the work status
// controller interpreted, and the member's status it reflected. The
// FullyApplied condition is True once every one of those Works is applied.
//
// The template's own .status then gets the members' statuses folded in by
// the resource interpreter's AggregateStatus (a Deployment's readyReplicas
// summed over the members, a Service's load-balancer ingress merged, ...),
// written through the status subresource, or with the object for custom
// resources that have none. Both are written only when they change, and
// each write is followed by an AggregateStatusSucceed event on the binding
// and on the template, for every kind: also for those without a status to
// aggregate into the template, such as a ClusterIP Service.
package bindingstatus
