// Package binding is the binding controller: it turns every ResourceBinding
// and ClusterResourceBinding into one Work per scheduled member cluster, in
// the member's execution namespace karmada-es-<cluster>, which the execution
// controller then applies in the member.
//
// For each cluster of spec.clusters (plus the clusters of spec.requiredBy,
// for dependencies that follow their workloads) the template is rendered:
//
//  1. the fields the control plane's API server filled in, and those that
//     must not reach a member, are pruned (Karmada's prune list: status,
//     uid, resourceVersion, generation, managedFields, ownerReferences,
//     finalizers, a Service's clusterIP, a Job's generated selector, ...);
//  2. the replicas are revised to the cluster's scheduled count through the
//     resource interpreter, so the schedule always wins over the template's
//     own count, and a divided Job's completions are split in proportion;
//  3. ClusterOverridePolicies, then OverridePolicies, are applied
//     (internal/overrides);
//  4. the labels and annotations of the Karmada wire interface are added:
//     the binding's permanent id and name, the template's uid and
//     generation, karmada.io/managed, the Work's name, namespace and
//     permanent id, the conflict resolution and the managed-labels /
//     managed-annotations records.
//
// A Work already holding exactly that is not written again: at thousands of
// bindings the controller's cost is its API writes. Works of clusters no
// longer scheduled are deleted (those of clusters being gracefully evicted
// stay until the eviction task is gone), and so are all of a binding's Works
// when it is deleted, before its finalizer is released.
//
// The controller is level-based: every reconcile recomputes the Works from
// the binding, its template, the override policies and the existing Works,
// so a missed event, a conflict or a restart loses nothing. It is requeued
// when the binding changes (the detector rewrites spec.resource.resourceVersion
// when the template changes), when an override policy that may select the
// template changes, and when one of its Works is changed or deleted behind
// its back.
package binding
