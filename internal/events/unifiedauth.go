package events

// Reasons of the unified-auth controller, Karmada's: on a Cluster, the
// Works narrowing its impersonator were written, or could not be.
const (
	ReasonSyncImpersonationConfigSucceed = "SyncImpersonationConfigSucceed"
	ReasonSyncImpersonationConfigFailed  = "SyncImpersonationConfigFailed"
)
