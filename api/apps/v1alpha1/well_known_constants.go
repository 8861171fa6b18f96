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

// Results of rebalancing one workload (status.observedWorkloads[].result).
const (
	// RebalanceSuccessful: the workload's binding was asked to reschedule.
	RebalanceSuccessful RebalanceResult = "Successful"
	// RebalanceFailed: the workload could not be rescheduled; see reason.
	RebalanceFailed RebalanceResult = "Failed"
)

// Reasons of a Failed result (status.observedWorkloads[].reason).
const (
	// RebalanceObjectNotFound: no binding exists for the workload (it does not
	// exist or no policy claims it).
	RebalanceObjectNotFound RebalanceFailedReason = "ReferencedBindingNotFound"
)
