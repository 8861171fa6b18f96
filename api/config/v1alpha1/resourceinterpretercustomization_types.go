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

// ResourceInterpreterCustomization teaches the control plane how to read and
// change objects of one kind, with Lua scripts. It comes first in the
// interpreter chain, ahead of webhooks, bundled customizations and the native
// defaults, so a user can override any of them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,path=resourceinterpretercustomizations,shortName=ric,categories=karmada
// +kubebuilder:printcolumn:name="TARGET-API-VERSION",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="TARGET-KIND",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the target kind and its Lua rules.
	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the target kind and its rules.
type ResourceInterpreterCustomizationSpec struct {
	// target is the kind the rules apply to.
	// +required
	Target CustomizationTarget `json:"target"`

	// customizations are the Lua rules; each operation left out falls through
	// to the next interpreter in the chain.
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is one kind, by apiVersion and kind.
type CustomizationTarget struct {
	// apiVersion of the target, for example "apps/v1" or "v1".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]+$')",message="spec.target.apiVersion must be <group>/<version> or <version>"
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the target, for example "Deployment".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +required
	Kind string `json:"kind"`
}

// CustomizationRules holds one optional Lua rule per interpreter operation.
// The function each script must define is listed per field.
type CustomizationRules struct {
	// retention keeps member-owned fields when the control plane updates an
	// object in a member. Script defines Retain(desiredObj, observedObj)
	// returning the object to apply.
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`

	// replicaResource reads replicas and per-replica requirements. Script
	// defines GetReplicas(obj) returning replica, requires.
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`

	// componentResource reads the components of a multi-component workload
	// (for example a job with a driver and executors). Script defines
	// GetComponents(obj) returning a list of {name, replicas,
	// replicaRequirements}.
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`

	// replicaRevision sets the replicas the scheduler assigned to a member.
	// Script defines ReviseReplica(obj, desiredReplica) returning the object.
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`

	// statusReflection picks what of a member object's status goes into
	// Work.status. Script defines ReflectStatus(observedObj) returning a table.
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`

	// statusAggregation folds the members' statuses into the template's
	// status. Script defines AggregateStatus(desiredObj, statusItems)
	// returning the object.
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`

	// healthInterpretation judges a member object's health. Script defines
	// InterpretHealth(observedObj) returning a boolean.
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`

	// dependencyInterpretation lists the objects a template needs alongside it
	// (ConfigMaps, Secrets, ...). Script defines GetDependencies(desiredObj)
	// returning a list of {apiVersion, kind, namespace, name, labelSelector}.
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// LocalValueRetention is the Lua rule of the Retain operation.
type LocalValueRetention struct {
	// luaScript defines Retain(desiredObj, observedObj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement is the Lua rule of the InterpretReplica operation.
type ReplicaResourceRequirement struct {
	// luaScript defines GetReplicas(obj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement is the Lua rule of the InterpretComponent
// operation.
type ComponentResourceRequirement struct {
	// luaScript defines GetComponents(obj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision is the Lua rule of the ReviseReplica operation.
type ReplicaRevision struct {
	// luaScript defines ReviseReplica(obj, desiredReplica).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusReflection is the Lua rule of the InterpretStatus operation.
type StatusReflection struct {
	// luaScript defines ReflectStatus(observedObj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusAggregation is the Lua rule of the AggregateStatus operation.
type StatusAggregation struct {
	// luaScript defines AggregateStatus(desiredObj, statusItems).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation is the Lua rule of the InterpretHealth operation.
type HealthInterpretation struct {
	// luaScript defines InterpretHealth(observedObj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation is the Lua rule of the InterpretDependency
// operation.
type DependencyInterpretation struct {
	// luaScript defines GetDependencies(desiredObj).
	// +kubebuilder:validation:MinLength=1
	// +required
	LuaScript string `json:"luaScript"`
}

// ResourceInterpreterCustomizationList is a list of
// ResourceInterpreterCustomizations.
//
// +kubebuilder:object:root=true
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ResourceInterpreterCustomizations.
	Items []ResourceInterpreterCustomization `json:"items"`
}
