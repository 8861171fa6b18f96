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

// Condition types of Work.status.conditions.
const (
	// WorkApplied is True when every manifest was applied in the member.
	WorkApplied = "Applied"
	// WorkProgressing is True while the member objects are rolling out.
	WorkProgressing = "Progressing"
	// WorkAvailable is True when the member objects are available.
	WorkAvailable = "Available"
	// WorkDegraded is True when the member objects fail to reach their
	// desired state.
	WorkDegraded = "Degraded"
	// WorkDispatching is False while spec.suspendDispatching holds the Work
	// back, True otherwise.
	WorkDispatching = "Dispatching"
)

// Reasons of the Work conditions.
const (
	// WorkReasonAppliedSuccessful: every manifest was applied.
	WorkReasonAppliedSuccessful = "AppliedSuccessful"
	// WorkReasonAppliedFailed: applying at least one manifest failed.
	WorkReasonAppliedFailed = "AppliedFailed"
	// WorkReasonResourceConflict: a member object of a manifest's name
	// exists that the federation does not manage, and conflictResolution is
	// Abort.
	WorkReasonResourceConflict = "ResourceConflict"
	// WorkReasonDispatching: the Work is being applied normally.
	WorkReasonDispatching = "Dispatching"
	// WorkReasonSuspendDispatching: spec.suspendDispatching holds the Work back.
	WorkReasonSuspendDispatching = "SuspendDispatching"
)

// Labels and annotations set on the objects created in a member from a Work,
// so that the member side can be traced back and cleaned up.
const (
	// WorkPermanentIDLabel (label) is the permanent id of the Work the object
	// came from.
	WorkPermanentIDLabel = "work.karmada.io/permanent-id"
	// WorkNamespaceAnnotation is the namespace of that Work.
	WorkNamespaceAnnotation = "work.karmada.io/namespace"
	// WorkNameAnnotation is the name of that Work.
	WorkNameAnnotation = "work.karmada.io/name"

	// ManagedByKarmadaLabel (label, value "true") marks an object managed by
	// the control plane.
	ManagedByKarmadaLabel = "karmada.io/managed"
	// ManagedByKarmadaLabelValue is the value of ManagedByKarmadaLabel.
	ManagedByKarmadaLabelValue = "true"

	// KarmadaSystemLabel (label, value "true") marks objects of the control
	// plane itself, which are never propagated.
	KarmadaSystemLabel = "karmada.io/system"
	// KarmadaSystemLabelValue is the value of KarmadaSystemLabel.
	KarmadaSystemLabelValue = "true"
)

// Annotations and labels that tie a manifest (and the member object) to the
// resource template it was rendered from.
const (
	// ResourceTemplateUIDAnnotation is the uid of the template.
	ResourceTemplateUIDAnnotation = "resourcetemplate.karmada.io/uid"
	// ResourceTemplateGenerationAnnotation is the template generation the
	// manifest was rendered from.
	ResourceTemplateGenerationAnnotation = "resourcetemplate.karmada.io/generation"
	// ManagedLabelsAnnotation lists (comma-separated) the label keys the
	// control plane owns on the member object; others are left alone.
	ManagedLabelsAnnotation = "resourcetemplate.karmada.io/managed-labels"
	// ManagedAnnotationsAnnotation lists (comma-separated) the annotation keys
	// the control plane owns on the member object.
	ManagedAnnotationsAnnotation = "resourcetemplate.karmada.io/managed-annotations"

	// DeletionProtectionLabel on a template, with value
	// DeletionProtectionAlways, makes the webhook refuse its deletion.
	DeletionProtectionLabel = "resourcetemplate.karmada.io/deletion-protected"
	// DeletionProtectionAlways is the value that enables deletion protection.
	DeletionProtectionAlways = "Always"

	// RetainReplicasLabel on a template, with value "true", keeps the member's
	// own replica count (for example when an HPA runs in the member).
	RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"
	// RetainReplicasValue is the value that enables RetainReplicasLabel.
	RetainReplicasValue = "true"
)

// Conflict resolution when a member already has an object of the same name
// that the control plane did not create.
const (
	// ConflictResolutionAnnotation on a template overrides the policy's
	// spec.conflictResolution for that template.
	ConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"
	// ConflictResolutionOverwrite takes the existing object over.
	ConflictResolutionOverwrite = "overwrite"
	// ConflictResolutionAbort leaves the existing object alone and fails the
	// apply.
	ConflictResolutionAbort = "abort"
)

// ExecutionControllerFinalizer keeps a Work until its objects are removed
// from (or, with preserveResourcesOnDeletion, released in) the member.
const ExecutionControllerFinalizer = "karmada.io/execution-controller"
