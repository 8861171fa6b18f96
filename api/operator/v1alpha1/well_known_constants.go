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

// Condition types of a Karmada.
const (
	// ConditionReady is True when every component is rolled out at the
	// wanted version and the API server answers.
	ConditionReady = "Ready"
	// ConditionProgressing is True while the operator is installing or
	// upgrading a phase.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when a phase failed or a rolled-out
	// component stopped being available.
	ConditionDegraded = "Degraded"
	// ConditionUnsupportedFields is True when the spec sets fields that
	// Flotilla accepts for compatibility with Karmada's operator but does
	// not act on; the message lists them.
	ConditionUnsupportedFields = "UnsupportedFields"
)

// Condition reasons. The phases are, in order: validation, certificates,
// etcd, the API server, its contents (CRDs, namespaces, RBAC, webhook
// configurations), the aggregated API server (installed and registered by
// its APIService), then the controllers.
const (
	ReasonValidationError                = "ValidationError"
	ReasonSuspended                      = "Suspended"
	ReasonDowngradeRefused               = "DowngradeRefused"
	ReasonUnknownVersion                 = "UnknownVersion"
	ReasonCertificatesPending            = "CertificatesPending"
	ReasonCertificatesFailed             = "CertificatesFailed"
	ReasonEtcdProgressing                = "EtcdProgressing"
	ReasonEtcdFailed                     = "EtcdFailed"
	ReasonAPIServerProgressing           = "APIServerProgressing"
	ReasonAPIServerFailed                = "APIServerFailed"
	ReasonContentsProgressing            = "ContentsProgressing"
	ReasonContentsFailed                 = "ContentsFailed"
	ReasonAggregatedAPIServerProgressing = "AggregatedAPIServerProgressing"
	ReasonAggregatedAPIServerFailed      = "AggregatedAPIServerFailed"
	ReasonControllersProgress            = "ControllersProgressing"
	ReasonControllersFailed              = "ControllersFailed"
	ReasonAdmissionProgressing           = "AdmissionProgressing"
	ReasonAdmissionFailed                = "AdmissionFailed"
	ReasonUpgrading                      = "Upgrading"
	ReasonAvailable                      = "Available"
	ReasonIgnored                        = "Ignored"
	ReasonNone                           = "None"
	ReasonDeleting                       = "Deleting"
)

// Finalizer keeps a Karmada until the operator removed what it made.
const Finalizer = "operator.karmada.io/finalizer"

// Labels and annotations the operator writes.
const (
	// LabelKarmadaName names the Karmada an object belongs to. It is on
	// everything the operator creates on the host cluster — chart objects,
	// Secrets, Certificates and Helm's release records — and is how the
	// operator finds and watches them.
	LabelKarmadaName = "operator.karmada.io/karmada-name"
	// LabelManagedBy is "flotilla-operator" on the operator's own objects
	// (Secrets, Certificates); chart objects carry Helm's value.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByOperator is the value of LabelManagedBy.
	ManagedByOperator = "flotilla-operator"
	// AnnotationCertificateHash on a pod template carries a digest of the
	// certificates its pods mount, so a rotation rolls them.
	AnnotationCertificateHash = "operator.karmada.io/certificate-hash"
)
