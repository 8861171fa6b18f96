// Package events names the reasons of the Kubernetes events Flotilla records.
// Clients and existing test suites watch for these exact strings: Normal
// events end in Succeed, Warning events in Failed.
package events

// Template and binding lifecycle.
const (
	ReasonApplyPolicySucceed         = "ApplyPolicySucceed"
	ReasonApplyPolicyFailed          = "ApplyPolicyFailed"
	ReasonGetReplicasSucceed         = "GetReplicasSucceed"
	ReasonGetReplicasFailed          = "GetReplicasFailed"
	ReasonGetComponentsSucceed       = "GetComponentsSucceed"
	ReasonGetComponentsFailed        = "GetComponentsFailed"
	ReasonGetDependenciesSucceed     = "GetDependenciesSucceed"
	ReasonGetDependenciesFailed      = "GetDependenciesFailed"
	ReasonPreemptPolicySucceed       = "PreemptPolicySucceed"
	ReasonPreemptPolicyFailed        = "PreemptPolicyFailed"
	ReasonScheduleBindingSucceed     = "ScheduleBindingSucceed"
	ReasonScheduleBindingFailed      = "ScheduleBindingFailed"
	ReasonSyncWorkSucceed            = "SyncWorkSucceed"
	ReasonSyncWorkFailed             = "SyncWorkFailed"
	ReasonApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	ReasonApplyOverridePolicyFailed  = "ApplyOverridePolicyFailed"
	ReasonAggregateStatusSucceed     = "AggregateStatusSucceed"
	ReasonAggregateStatusFailed      = "AggregateStatusFailed"
	ReasonCleanupWorkFailed          = "CleanupWorkFailed"
	ReasonEvictWorkloadSucceed       = "EvictWorkloadFromClusterSucceed"
	ReasonEvictWorkloadFailed        = "EvictWorkloadFromClusterFailed"
	ReasonDescheduleBindingSucceed   = "DescheduleBindingSucceed"
	ReasonDescheduleBindingFailed    = "DescheduleBindingFailed"
	ReasonSyncDependenciesSucceed    = "SyncScheduleResultToDependenciesSucceed"
	ReasonSyncDependenciesFailed     = "SyncScheduleResultToDependenciesFailed"
	ReasonDependencyPolicyConflict   = "DependencyPolicyConflict"
)

// Work lifecycle in member clusters.
const (
	ReasonSyncSucceed            = "SyncSucceed"
	ReasonSyncFailed             = "SyncFailed"
	ReasonWorkDispatching        = "WorkDispatching"
	ReasonReflectStatusSucceed   = "ReflectStatusSucceed"
	ReasonReflectStatusFailed    = "ReflectStatusFailed"
	ReasonInterpretHealthSucceed = "InterpretHealthSucceed"
	ReasonInterpretHealthFailed  = "InterpretHealthFailed"
)

// Cluster lifecycle.
const (
	ReasonCreateExecutionSpaceSucceed = "CreateExecutionSpaceSucceed"
	ReasonCreateExecutionSpaceFailed  = "CreateExecutionSpaceFailed"
	ReasonRemoveExecutionSpaceSucceed = "RemoveExecutionSpaceSucceed"
	ReasonRemoveExecutionSpaceFailed  = "RemoveExecutionSpaceFailed"
	ReasonTaintClusterSucceed         = "TaintClusterSucceed"
	ReasonTaintClusterFailed          = "TaintClusterFailed"
)
