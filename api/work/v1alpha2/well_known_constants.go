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

package v1alpha2

// Labels and annotations that link Works (and attached bindings) back to the
// binding that owns them.
const (
	// ResourceBindingPermanentIDLabel holds the permanent id of a
	// ResourceBinding, on the binding itself and on its Works.
	ResourceBindingPermanentIDLabel = "resourcebinding.karmada.io/permanent-id"

	// ClusterResourceBindingPermanentIDLabel holds the permanent id of a
	// ClusterResourceBinding, on the binding itself and on its Works.
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"

	// ResourceBindingNamespaceAnnotationKey on a Work is the namespace of the
	// owning ResourceBinding.
	ResourceBindingNamespaceAnnotationKey = "resourcebinding.karmada.io/namespace"

	// ResourceBindingNameAnnotationKey on a Work is the name of the owning
	// ResourceBinding.
	ResourceBindingNameAnnotationKey = "resourcebinding.karmada.io/name"

	// ClusterResourceBindingAnnotationKey on a Work is the name of the owning
	// ClusterResourceBinding.
	ClusterResourceBindingAnnotationKey = "clusterresourcebinding.karmada.io/name"

	// BindingDependenciesAnnotationKey on a binding is the JSON list of the
	// template's dependencies, kept for the dependencies distributor.
	BindingDependenciesAnnotationKey = "resourcebinding.karmada.io/dependencies"

	// BindingManagedByLabel marks attached bindings created by the
	// dependencies distributor, with the distributor as value.
	BindingManagedByLabel = "binding.karmada.io/managed-by"
)

// Condition types of ResourceBinding and ClusterResourceBinding.
const (
	// Scheduled is True once the scheduler has placed the binding.
	Scheduled = "Scheduled"

	// FullyApplied is True once the resource is applied in every scheduled
	// cluster.
	FullyApplied = "FullyApplied"
)

// Reasons of the Scheduled and FullyApplied conditions.
const (
	// BindingReasonSuccess: the step succeeded.
	BindingReasonSuccess = "Success"

	// BindingReasonSchedulerError: scheduling failed on an internal error;
	// it will be retried.
	BindingReasonSchedulerError = "SchedulerError"

	// BindingReasonNoClusterFit: no cluster passed the filters.
	BindingReasonNoClusterFit = "NoClusterFit"

	// BindingReasonUnschedulable: clusters passed the filters but the
	// replicas or spread constraints could not be satisfied.
	BindingReasonUnschedulable = "Unschedulable"

	// BindingReasonQuotaExceeded: a FederatedResourceQuota would be exceeded.
	BindingReasonQuotaExceeded = "QuotaExceeded"
)

// Reasons and producers of gracefulEvictionTasks.
const (
	// EvictionReasonTaintUntolerated: the cluster got a NoExecute taint the
	// binding does not tolerate.
	EvictionReasonTaintUntolerated = "TaintUntolerated"

	// EvictionReasonApplicationFailure: the application stayed unhealthy in
	// the cluster longer than its failover allows.
	EvictionReasonApplicationFailure = "ApplicationFailure"

	// EvictionProducerTaintManager is the producer of taint evictions.
	EvictionProducerTaintManager = "TaintManager"
)

// Finalizers that keep a binding until its Works (or attached bindings) are
// cleaned up.
const (
	// BindingControllerFinalizer is on ResourceBindings.
	BindingControllerFinalizer = "karmada.io/binding-controller"

	// ClusterResourceBindingControllerFinalizer is on ClusterResourceBindings.
	ClusterResourceBindingControllerFinalizer = "karmada.io/cluster-resource-binding-controller"

	// BindingDependenciesDistributorFinalizer is on bindings whose
	// dependencies were distributed as attached bindings.
	BindingDependenciesDistributorFinalizer = "karmada.io/binding-dependencies-distributor"
)
