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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// ResourceInterpreterContext is the body POSTed to an interpreter webhook
// (request set) and returned by it (response set, same uid). It is a wire
// type, not a stored resource: it has no ObjectMeta, so no CRD is generated
// for it; root=true only gives it DeepCopyObject for encoding.
//
// +kubebuilder:object:root=true
type ResourceInterpreterContext struct {
	metav1.TypeMeta `json:",inline"`

	// request is what the control plane asks.
	// +optional
	Request *ResourceInterpreterRequest `json:"request,omitempty"`

	// response is what the webhook answers.
	// +optional
	Response *ResourceInterpreterResponse `json:"response,omitempty"`
}

// ResourceInterpreterRequest is one question about one object.
type ResourceInterpreterRequest struct {
	// uid identifies this call; the response must echo it.
	// +required
	UID types.UID `json:"uid"`

	// kind of the object.
	// +required
	Kind metav1.GroupVersionKind `json:"kind"`

	// name of the object.
	// +required
	Name string `json:"name"`

	// namespace of the object; empty when cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// operation is the question asked.
	// +required
	Operation InterpreterOperation `json:"operation"`

	// object is the resource template, or for Retain the desired object.
	// +optional
	Object runtime.RawExtension `json:"object,omitempty"`

	// observedObject is the object as it is in the member; set for Retain,
	// InterpretStatus and InterpretHealth.
	// +optional
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`

	// replicas is the count to write into the object; set for ReviseReplica.
	// +optional
	DesiredReplicas *int32 `json:"replicas,omitempty"`

	// aggregatedStatus holds the members' reflected statuses; set for
	// AggregateStatus.
	// +optional
	AggregatedStatus []workv1alpha2.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceInterpreterResponse is the webhook's answer. Only the fields of the
// operation asked are read.
type ResourceInterpreterResponse struct {
	// uid is the request's uid.
	// +required
	UID types.UID `json:"uid"`

	// successful says whether the webhook could answer; when false, status
	// says why and the rest is ignored.
	// +required
	Successful bool `json:"successful"`

	// status details a failure.
	// +optional
	Status *RequestStatus `json:"status,omitempty"`

	// patch changes request.object (ReviseReplica, Retain, AggregateStatus),
	// in the format of patchType.
	// +optional
	Patch []byte `json:"patch,omitempty"`

	// patchType is the format of patch; only JSONPatch is defined.
	// +optional
	PatchType *PatchType `json:"patchType,omitempty"`

	// replicas answers InterpretReplica.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// replicaRequirements answers InterpretReplica: what each replica needs.
	// +optional
	ReplicaRequirements *workv1alpha2.ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// components answers InterpretComponent.
	// +optional
	Components []workv1alpha2.Component `json:"components,omitempty"`

	// dependencies answers InterpretDependency.
	// +optional
	Dependencies []DependentObjectReference `json:"dependencies,omitempty"`

	// rawStatus answers InterpretStatus: the status to reflect.
	// +optional
	RawStatus *runtime.RawExtension `json:"rawStatus,omitempty"`

	// healthy answers InterpretHealth.
	// +optional
	Healthy *bool `json:"healthy,omitempty"`
}

// RequestStatus explains a failed call.
type RequestStatus struct {
	// message is a human-readable reason.
	// +optional
	Message string `json:"message,omitempty"`

	// code is an HTTP-like status code.
	// +required
	Code int32 `json:"code"`
}

// PatchType is the format of ResourceInterpreterResponse.patch.
type PatchType string

// PatchTypeJSONPatch is RFC 6902 JSON Patch.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// DependentObjectReference names objects a template depends on: one by name,
// or many by labelSelector (name takes precedence).
type DependentObjectReference struct {
	// apiVersion of the dependency, for example "v1".
	// +required
	APIVersion string `json:"apiVersion"`

	// kind of the dependency, for example "ConfigMap".
	// +required
	Kind string `json:"kind"`

	// namespace of the dependency; empty for the template's own namespace
	// or a cluster-scoped kind.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the dependency.
	// +optional
	Name string `json:"name,omitempty"`

	// labelSelector selects dependencies when name is empty.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}
