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

// Labels and annotations the detector writes on the templates it claims and
// on their bindings, so that either side can find the other.
const (
	// PropagationPolicyPermanentIDLabel holds the permanent id of the claiming
	// PropagationPolicy. It survives policy renames, unlike name annotations.
	PropagationPolicyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id"

	// PropagationPolicyNamespaceAnnotation is the namespace of the claiming
	// PropagationPolicy.
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"

	// PropagationPolicyNameAnnotation is the name of the claiming
	// PropagationPolicy.
	PropagationPolicyNameAnnotation = "propagationpolicy.karmada.io/name"

	// ClusterPropagationPolicyPermanentIDLabel holds the permanent id of the
	// claiming ClusterPropagationPolicy.
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"

	// ClusterPropagationPolicyAnnotation is the name of the claiming
	// ClusterPropagationPolicy.
	ClusterPropagationPolicyAnnotation = "clusterpropagationpolicy.karmada.io/name"

	// ResourceTemplateClaimedByLabel records which policy kinds claim a
	// template, so claimed templates can be listed by label.
	ResourceTemplateClaimedByLabel = "resourcetemplate.karmada.io/claimed-by"

	// NamespaceSkipAutoPropagationLabel set to "true" on a Namespace keeps it
	// from being propagated to members automatically.
	NamespaceSkipAutoPropagationLabel = "namespace.karmada.io/skip-auto-propagation"
)

// Annotations recording what was applied, read back to detect changes.
const (
	// AppliedPlacementAnnotation on a binding is the JSON of the placement it
	// was last scheduled with.
	AppliedPlacementAnnotation = "policy.karmada.io/applied-placement"

	// AppliedOverrides on a member object is the JSON list of the
	// OverridePolicies applied to it.
	AppliedOverrides = "policy.karmada.io/applied-overrides"

	// AppliedClusterOverrides on a member object is the JSON list of the
	// ClusterOverridePolicies applied to it.
	AppliedClusterOverrides = "policy.karmada.io/applied-cluster-overrides"
)

// Finalizers that keep a policy until the labels it put on templates and
// bindings are removed.
const (
	// PropagationPolicyControllerFinalizer is on PropagationPolicies.
	PropagationPolicyControllerFinalizer = "karmada.io/propagation-policy-controller"

	// ClusterPropagationPolicyControllerFinalizer is on
	// ClusterPropagationPolicies.
	ClusterPropagationPolicyControllerFinalizer = "karmada.io/cluster-propagation-policy-controller"
)

// Defaults that the schema also declares, for code that builds specs.
const (
	// DefaultSchedulerName is the scheduler used when schedulerName is empty.
	DefaultSchedulerName = "default-scheduler"
)

// Labels on the Works that carry a FederatedResourceQuota's static
// assignments to member clusters as ResourceQuotas.
const (
	// FederatedResourceQuotaNamespaceLabel is the namespace of the quota.
	FederatedResourceQuotaNamespaceLabel = "federatedresourcequota.karmada.io/namespace"
	// FederatedResourceQuotaNameLabel is the name of the quota.
	FederatedResourceQuotaNameLabel = "federatedresourcequota.karmada.io/name"
)
