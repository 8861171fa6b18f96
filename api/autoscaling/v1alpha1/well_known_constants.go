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

// Kinds of this group, as scaleTargetRef.kind names them.
const (
	// FederatedHPAKind is the kind of FederatedHPA; a CronFederatedHPA whose
	// scaleTargetRef has this kind and this group's apiVersion sets its
	// bounds instead of a replica count.
	FederatedHPAKind = "FederatedHPA"

	// CronFederatedHPAKind is the kind of CronFederatedHPA.
	CronFederatedHPAKind = "CronFederatedHPA"
)

// Defaults of a FederatedHPA's spec, set by the webhook.
const (
	// DefaultMinReplicas is spec.minReplicas when unset.
	DefaultMinReplicas int32 = 1

	// DefaultCPUUtilization is the averageUtilization, in percent, of the CPU
	// metric a FederatedHPA without metrics gets.
	DefaultCPUUtilization int32 = 80
)

// QuerySourceAnnotation, on a PodMetrics served by the metrics adapter in
// the control plane, names the member cluster the sample comes from: pods
// of the same name in two members are then told apart.
const QuerySourceAnnotation = "resource.karmada.io/query-from-cluster"
