// Package resourcemetrics serves metrics.k8s.io/v1beta1 (PodMetrics and
// NodeMetrics) in the control plane by asking every Ready member's own
// metrics.k8s.io and merging the answers, as karmada-metrics-adapter does:
// a list holds the items of every member, each annotated with the member
// it came from (resource.karmada.io/query-from-cluster), so two pods of the
// same name in two members both appear; a get by name answers the one
// member that has it, and a Conflict when several do.
package resourcemetrics
