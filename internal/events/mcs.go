package events

// Reasons of the multi-cluster service controllers, Karmada's.
const (
	// ReasonSyncDerivedServiceSucceed / Failed: on a ServiceImport, its
	// derived Service was written, or could not be.
	ReasonSyncDerivedServiceSucceed = "SyncDerivedServiceSucceed"
	ReasonSyncDerivedServiceFailed  = "SyncDerivedServiceFailed"
)
