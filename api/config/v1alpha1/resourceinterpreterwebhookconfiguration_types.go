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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterWebhookConfiguration registers interpreter webhooks: HTTP
// services asked, in the interpreter chain after the Lua customizations, to
// interpret objects of the kinds their rules match.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,path=resourceinterpreterwebhookconfigurations,categories=karmada
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// webhooks are the webhooks and the operations and kinds each handles.
	// Names are unique within the configuration.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +required
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhook is one interpreter webhook.
type ResourceInterpreterWebhook struct {
	// name identifies the webhook; a fully qualified DNS name with at least
	// three labels (for example "replicas.example.com"), so that webhooks of
	// different owners cannot collide.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$`
	// +required
	Name string `json:"name"`

	// clientConfig says how to reach the webhook: exactly one of url or
	// service, and the CA bundle that signs its serving certificate.
	// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.service)",message="clientConfig: exactly one of url or service must be specified"
	// +kubebuilder:validation:XValidation:rule="!has(self.url) || self.url.startsWith('https://')",message="clientConfig.url must be an https URL"
	// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.port) || (self.service.port >= 1 && self.service.port <= 65535)",message="clientConfig.service.port must be between 1 and 65535"
	// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.service.path) || self.service.path.startsWith('/')",message="clientConfig.service.path must start with '/'"
	// +required
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`

	// rules say which operations on which kinds go to this webhook. A request
	// goes to the webhook if any rule matches it.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Rules []RuleWithOperations `json:"rules,omitempty"`

	// timeoutSeconds bounds each call, 1 to 30 seconds; on timeout the call
	// fails and the interpreter falls through to the next in the chain.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	// +kubebuilder:default=10
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// interpreterContextVersions lists the ResourceInterpreterContext versions
	// the webhook accepts, most preferred first. The control plane sends the
	// first one it speaks; it must include v1alpha1.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.exists(v, v == 'v1alpha1')",message="interpreterContextVersions must include v1alpha1"
	// +required
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations matches operations on kinds.
type RuleWithOperations struct {
	// operations the rule matches: InterpretReplica, ReviseReplica,
	// InterpretComponent, InterpretStatus, Prune, Retain, AggregateStatus,
	// InterpretHealth, InterpretDependency, or "*" alone for all of them.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(op, op in ['*', 'InterpretReplica', 'ReviseReplica', 'InterpretComponent', 'InterpretStatus', 'Prune', 'Retain', 'AggregateStatus', 'InterpretHealth', 'InterpretDependency'])",message="operations must be one of *, InterpretReplica, ReviseReplica, InterpretComponent, InterpretStatus, Prune, Retain, AggregateStatus, InterpretHealth, InterpretDependency"
	// +kubebuilder:validation:XValidation:rule="!('*' in self) || self.size() == 1",message="operations: '*' must be the only operation when present"
	// +required
	Operations []InterpreterOperation `json:"operations"`

	// Rule is the group, version and kind part of the match.
	Rule `json:",inline"`
}

// Rule matches kinds by API group, version and kind. "*" alone matches all.
type Rule struct {
	// apiGroups the kinds belong to; "" is the core group, "*" all groups.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!('*' in self) || self.size() == 1",message="apiGroups: '*' must be the only group when present"
	// +required
	APIGroups []string `json:"apiGroups"`

	// apiVersions of the kinds; "*" for all versions.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!('*' in self) || self.size() == 1",message="apiVersions: '*' must be the only version when present"
	// +required
	APIVersions []string `json:"apiVersions"`

	// kinds to match, for example "Deployment"; "*" for all kinds.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!('*' in self) || self.size() == 1",message="kinds: '*' must be the only kind when present"
	// +required
	Kinds []string `json:"kinds"`
}

// InterpreterOperation is one question the control plane asks an
// interpreter. The same names are used in webhook rules and in
// ResourceInterpreterContext requests.
type InterpreterOperation string

const (
	// InterpreterOperationAll matches every operation in a rule.
	InterpreterOperationAll InterpreterOperation = "*"
	// InterpreterOperationInterpretReplica: replicas and per-replica
	// requirements of a template.
	InterpreterOperationInterpretReplica InterpreterOperation = "InterpretReplica"
	// InterpreterOperationInterpretComponent: components of a multi-component
	// template.
	InterpreterOperationInterpretComponent InterpreterOperation = "InterpretComponent"
	// InterpreterOperationReviseReplica: set the replicas assigned to a member.
	InterpreterOperationReviseReplica InterpreterOperation = "ReviseReplica"
	// InterpreterOperationInterpretStatus: the status to reflect from a member
	// object.
	InterpreterOperationInterpretStatus InterpreterOperation = "InterpretStatus"
	// InterpreterOperationPrune: strip fields that must not be sent to members.
	InterpreterOperationPrune InterpreterOperation = "Prune"
	// InterpreterOperationRetain: keep member-owned fields on update.
	InterpreterOperationRetain InterpreterOperation = "Retain"
	// InterpreterOperationAggregateStatus: fold member statuses into the
	// template.
	InterpreterOperationAggregateStatus InterpreterOperation = "AggregateStatus"
	// InterpreterOperationInterpretHealth: health of a member object.
	InterpreterOperationInterpretHealth InterpreterOperation = "InterpretHealth"
	// InterpreterOperationInterpretDependency: objects a template depends on.
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
)

// ResourceInterpreterWebhookConfigurationList is a list of
// ResourceInterpreterWebhookConfigurations.
//
// +kubebuilder:object:root=true
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ResourceInterpreterWebhookConfigurations.
	Items []ResourceInterpreterWebhookConfiguration `json:"items"`
}
