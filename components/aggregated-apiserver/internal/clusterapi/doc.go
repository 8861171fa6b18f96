// Package clusterapi is the scheme the aggregated API server serves:
// cluster.karmada.io/v1alpha1 Cluster and ClusterList, and the options of a
// proxy request, ClusterProxyOptions, which Karmada serves in the same
// group-version.
//
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.api.cluster.v1alpha1
package clusterapi
