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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cronfederatedhpas,scope=Namespaced,shortName=cronfhpa,categories=karmada
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// CronFederatedHPA scales a target on schedules: at each time a rule's cron
// expression names, the target's replicas (a workload with a scale
// subresource) or its bounds (a FederatedHPA) are set to the rule's values.
type CronFederatedHPA struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the target and its scaling rules.
	// +required
	Spec CronFederatedHPASpec `json:"spec"`

	// status records the executions of each rule.
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPASpec names the target and when and how it is scaled.
type CronFederatedHPASpec struct {
	// scaleTargetRef is what the rules scale: a workload with a scale
	// subresource, such as a Deployment, or a FederatedHPA
	// (apiVersion autoscaling.karmada.io/v1alpha1).
	// +required
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// rules are the schedules and what each one sets. Rule names are unique.
	// +required
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one schedule and the scaling it applies.
type CronFederatedHPARule struct {
	// name identifies the rule and its execution history: renaming a rule
	// starts a new history.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	Name string `json:"name"`

	// schedule is a cron expression in the syntax of a CronJob's schedule:
	// five fields (minute, hour, day of month, month, day of week) or one of
	// @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly.
	// +required
	Schedule string `json:"schedule"`

	// targetReplicas is the replica count set on a workload target. Required
	// unless the target is a FederatedHPA.
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`

	// targetMinReplicas is the minReplicas set on a FederatedHPA target;
	// unset leaves it as it is. A FederatedHPA target needs this or
	// targetMaxReplicas.
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`

	// targetMaxReplicas is the maxReplicas set on a FederatedHPA target;
	// unset leaves it as it is.
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`

	// suspend stops further executions of the rule while true.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// timeZone is the IANA time zone the schedule is read in, for example
	// "Europe/Paris"; unset means the controller's local time zone.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// successfulHistoryLimit is how many successful executions of the rule
	// status keeps.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// failedHistoryLimit is how many failed executions of the rule status
	// keeps.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is what the rules did.
type CronFederatedHPAStatus struct {
	// executionHistories holds one history per rule.
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory is the recent executions of one rule.
type ExecutionHistory struct {
	// ruleName is the rule of spec.rules this history is for.
	// +required
	RuleName string `json:"ruleName"`

	// nextExecutionTime is when the rule runs next; unset while suspended.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`

	// successfulExecutions are the latest successful executions, at most
	// successfulHistoryLimit of them.
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`

	// failedExecutions are the latest failed executions, at most
	// failedHistoryLimit of them.
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution is one execution that scaled the target.
type SuccessfulExecution struct {
	// scheduleTime is when the schedule said to run.
	// +required
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// executionTime is when the execution actually ran.
	// +required
	ExecutionTime *metav1.Time `json:"executionTime"`

	// appliedReplicas is the replica count set, for a rule with
	// targetReplicas.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`

	// appliedMaxReplicas is the maxReplicas set, for a rule with
	// targetMaxReplicas.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`

	// appliedMinReplicas is the minReplicas set, for a rule with
	// targetMinReplicas.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
}

// FailedExecution is one execution that could not scale the target.
type FailedExecution struct {
	// scheduleTime is when the schedule said to run.
	// +required
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// executionTime is when the execution actually ran.
	// +required
	ExecutionTime *metav1.Time `json:"executionTime"`

	// message says why the execution failed.
	// +required
	Message string `json:"message"`
}

// +kubebuilder:object:root=true

// CronFederatedHPAList is a list of CronFederatedHPA.
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the CronFederatedHPA objects.
	Items []CronFederatedHPA `json:"items"`
}
