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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadRebalancer asks, once, that the named workloads be rescheduled from
// scratch, ignoring where they run now (for example after new clusters joined
// or a failed cluster came back). The rebalancer controller triggers each
// workload's binding and records the outcome in status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=workloadrebalancers,categories=karmada
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type WorkloadRebalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the workloads to reschedule.
	// +required
	Spec WorkloadRebalancerSpec `json:"spec"`

	// status records, per workload, whether rescheduling was triggered.
	// +optional
	Status WorkloadRebalancerStatus `json:"status,omitempty"`
}

// WorkloadRebalancerSpec is the set of workloads to reschedule.
type WorkloadRebalancerSpec struct {
	// workloads to reschedule (resource templates: Deployments, CRD objects,
	// ...). Entries may be added later; each is triggered once.
	// +kubebuilder:validation:MinItems=1
	// +required
	Workloads []ObjectReference `json:"workloads"`

	// ttlSecondsAfterFinished deletes the rebalancer this many seconds after
	// every workload finished (0: right away). Unset: kept until deleted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ObjectReference names one resource template.
type ObjectReference struct {
	// apiVersion of the workload, for example "apps/v1".
	// +kubebuilder:validation:MinLength=1
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the workload, for example "Deployment".
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// namespace of the workload; empty for cluster-scoped kinds.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// WorkloadRebalancerStatus is the outcome per workload.
type WorkloadRebalancerStatus struct {
	// observedWorkloads holds the result for each workload of spec.workloads.
	// +optional
	ObservedWorkloads []ObservedWorkload `json:"observedWorkloads,omitempty"`

	// observedGeneration is the generation of spec these results are for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// finishTime is when every workload reached a result; the TTL counts from
	// here.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// ObservedWorkload is the result for one workload.
type ObservedWorkload struct {
	// workload this result is for.
	// +required
	Workload ObjectReference `json:"workload"`

	// result: Successful (rescheduling triggered) or Failed; empty while
	// pending.
	// +optional
	Result RebalanceResult `json:"result,omitempty"`

	// reason why the result is Failed.
	// +optional
	Reason RebalanceFailedReason `json:"reason,omitempty"`
}

// RebalanceResult is the outcome of rebalancing one workload. Values are
// listed in well_known_constants.go; the schema leaves them open, as Karmada
// does, so new outcomes stay readable by old clients.
type RebalanceResult string

// RebalanceFailedReason says why rebalancing a workload failed.
type RebalanceFailedReason string

// WorkloadRebalancerList is a list of WorkloadRebalancers.
//
// +kubebuilder:object:root=true
type WorkloadRebalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the WorkloadRebalancers.
	Items []WorkloadRebalancer `json:"items"`
}
