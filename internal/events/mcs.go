package events

// Reasons of the multi-cluster service controllers, Karmada's.
const (
	// ReasonSyncDerivedServiceSucceed / Failed: on a ServiceImport, its
	// derived Service was written, or could not be.
	ReasonSyncDerivedServiceSucceed = "SyncDerivedServiceSucceed"
	ReasonSyncDerivedServiceFailed  = "SyncDerivedServiceFailed"
)

// Reasons of the multiclusterservice controller.
const (
	// ReasonSyncServiceSucceed / Failed: on a MultiClusterService, its
	// Service was propagated to the provider and consumer clusters, or not.
	ReasonSyncServiceSucceed = "SyncServiceSucceed"
	ReasonSyncServiceFailed  = "SyncServiceFailed"
)
