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
	// ReasonAggregateStatusSucceed is recorded on the binding and on the
	// template whenever status is aggregated, for every kind, also those
	// with no status of their own to aggregate (a ClusterIP Service).
	ReasonAggregateStatusSucceed   = "AggregateStatusSucceed"
	ReasonAggregateStatusFailed    = "AggregateStatusFailed"
	ReasonCleanupWorkFailed        = "CleanupWorkFailed"
	ReasonEvictWorkloadSucceed     = "EvictWorkloadFromClusterSucceed"
	ReasonEvictWorkloadFailed      = "EvictWorkloadFromClusterFailed"
	ReasonDescheduleBindingSucceed = "DescheduleBindingSucceed"
	ReasonDescheduleBindingFailed  = "DescheduleBindingFailed"
	ReasonSyncDependenciesSucceed  = "SyncScheduleResultToDependenciesSucceed"
	ReasonSyncDependenciesFailed   = "SyncScheduleResultToDependenciesFailed"
	ReasonDependencyPolicyConflict = "DependencyPolicyConflict"
)

// FederatedResourceQuota status from the bindings of its namespace (with
// FederatedQuotaEnforcement); its Works and member status use
// ReasonSyncWork* and ReasonAggregateStatus*, as Karmada's.
const (
	ReasonCollectOverallStatusSucceed = "CollectOverallStatusSucceed"
	ReasonCollectOverallStatusFailed  = "CollectOverallStatusFailed"
)

// Work lifecycle in member clusters.
const (
	ReasonSyncSucceed = "SyncSucceed"
	ReasonSyncFailed  = "SyncFailed"
	// ReasonWorkDispatching is recorded on a Work whenever its Dispatching
	// condition changes: when it first becomes True ("Work is being
	// dispatched to member clusters."), and on suspension and resumption.
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
