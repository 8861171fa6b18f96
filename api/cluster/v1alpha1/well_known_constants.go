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

// Condition types of Cluster.status.conditions.
const (
	// ClusterConditionReady is True while the member answers its health check.
	ClusterConditionReady = "Ready"
	// ClusterConditionCompleteAPIEnablements is True when status.apiEnablements
	// lists every served group-version; False after partial discovery.
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// Reasons of the Cluster conditions.
const (
	// ClusterReasonReady: the member's /readyz (or /healthz) answered ok.
	ClusterReasonReady = "ClusterReady"
	// ClusterReasonNotReady: the member answered, but not ok.
	ClusterReasonNotReady = "ClusterNotReady"
	// ClusterReasonNotReachable: the member could not be reached at all
	// (Ready=False, message "cluster is not reachable").
	ClusterReasonNotReachable = "ClusterNotReachable"
	// ClusterReasonStatusUnknown: the agent of a Pull member stopped
	// renewing its lease, so nobody knows how the member is (Ready=Unknown).
	ClusterReasonStatusUnknown = "ClusterStatusUnknown"

	// APIEnablementsReasonComplete: discovery returned every group-version.
	APIEnablementsReasonComplete = "Complete"
	// APIEnablementsReasonPartial: discovery failed for some group-versions.
	APIEnablementsReasonPartial = "PartialAPIEnablements"
	// APIEnablementsReasonEmpty: discovery returned nothing.
	APIEnablementsReasonEmpty = "EmptyAPIEnablements"
)

// Taint keys the control plane manages on Cluster.spec.taints.
const (
	// TaintClusterNotReady is set while Ready is False (NoSchedule; also
	// NoExecute when failover is on).
	TaintClusterNotReady = "cluster.karmada.io/not-ready"
	// TaintClusterUnreachable is set while Ready is Unknown (nobody could
	// tell the member's health); an unreachable member is Ready=False.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
	// TaintClusterUnschedulable is set by cordon: no new placements.
	TaintClusterUnschedulable = "cluster.karmada.io/unschedulable"
	// TaintClusterUnscheduler is Karmada's Go name for TaintClusterUnschedulable.
	TaintClusterUnscheduler = TaintClusterUnschedulable
	// TaintClusterTerminating is set while the Cluster is being deleted.
	TaintClusterTerminating = "cluster.karmada.io/terminating"
)

// Credentials of a Push cluster: keys of the Secret named by spec.secretRef.
const (
	// SecretTokenKey holds the bearer token for the member's API server.
	SecretTokenKey = "token"
	// SecretCADataKey holds the PEM CA bundle of the member's API server.
	SecretCADataKey = "caBundle"
)

// Namespaces and names derived from a Cluster.
const (
	// ExecutionSpacePrefix prefixes the execution namespace of a member:
	// the Works for cluster C live in "karmada-es-C".
	ExecutionSpacePrefix = "karmada-es-"
	// NamespaceClusterSecrets holds the credentials Secrets of pushed clusters.
	NamespaceClusterSecrets = "karmada-cluster"
	// NamespaceClusterLeases holds, in the control plane, the Lease named
	// after each Pull cluster that its agent renews (the same namespace).
	NamespaceClusterLeases = "karmada-cluster"
	// NamespaceSystem holds the control plane's own components.
	NamespaceSystem = "karmada-system"

	// ClusterControllerFinalizer keeps a Cluster until its execution
	// namespace and Works are gone.
	ClusterControllerFinalizer = "karmada.io/cluster-controller"
)
