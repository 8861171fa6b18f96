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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clustertaintpolicies,scope=Cluster,categories=karmada

// ClusterTaintPolicy adds taints to member clusters when their conditions
// match, and removes them when other conditions match, so that scheduling and
// eviction follow cluster health without manual tainting.
type ClusterTaintPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which clusters are tainted, when, and with what.
	// +required
	Spec ClusterTaintPolicySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterTaintPolicyList is a list of ClusterTaintPolicy.
type ClusterTaintPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterTaintPolicy objects.
	Items []ClusterTaintPolicy `json:"items"`
}

// ClusterTaintPolicySpec is the desired behaviour of a ClusterTaintPolicy.
type ClusterTaintPolicySpec struct {
	// targetClusters picks the clusters the policy watches. Absent means all.
	// +optional
	TargetClusters *ClusterAffinity `json:"targetClusters,omitempty"`

	// addOnConditions add the taints when all of them match a cluster's
	// status conditions.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	AddOnConditions []MatchCondition `json:"addOnConditions,omitempty"`

	// removeOnConditions remove the taints when all of them match.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	RemoveOnConditions []MatchCondition `json:"removeOnConditions,omitempty"`

	// taints are added or removed together.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +required
	Taints []Taint `json:"taints"`
}

// MatchConditionOperator compares a condition's status with a value set.
type MatchConditionOperator string

// Match condition operators.
const (
	// MatchConditionOpIn matches when the status is one of the values.
	MatchConditionOpIn MatchConditionOperator = "In"
	// MatchConditionOpNotIn matches when it is none of them.
	MatchConditionOpNotIn MatchConditionOperator = "NotIn"
)

// MatchCondition tests one status condition of a cluster.
type MatchCondition struct {
	// conditionType is the condition type to test, e.g. Ready.
	// +kubebuilder:validation:MinLength=1
	// +required
	ConditionType string `json:"conditionType"`

	// operator is In or NotIn.
	// +kubebuilder:validation:XValidation:rule="self in ['In', 'NotIn']",message="operator must be In or NotIn"
	// +required
	Operator MatchConditionOperator `json:"operator"`

	// statusValues are condition statuses (True, False, Unknown) the operator
	// compares with.
	// +required
	StatusValues []metav1.ConditionStatus `json:"statusValues"`
}

// Taint is a taint the policy manages on a cluster. Its time added is not
// part of the policy.
type Taint struct {
	// key is the taint key.
	// +kubebuilder:validation:MinLength=1
	// +required
	Key string `json:"key"`

	// value is the taint value.
	// +optional
	Value string `json:"value,omitempty"`

	// effect is NoSchedule or NoExecute.
	// +kubebuilder:validation:XValidation:rule="self in ['NoSchedule', 'NoExecute']",message="effect must be NoSchedule or NoExecute"
	// +required
	Effect corev1.TaintEffect `json:"effect"`
}
