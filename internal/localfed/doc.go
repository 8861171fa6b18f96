// Package localfed runs a local federation made of real Kubernetes binaries on
// 127.0.0.1: a control-plane API server named karmada-apiserver with Flotilla's
// CRDs and a kube-controller-manager, plus member clusters member1 … memberN,
// each a kube-apiserver, kube-controller-manager, kube-scheduler and kwok with
// fake nodes whose pods go Running. Every member is registered in the control
// plane as a Push-mode Cluster. StopMember and StartMember take a member away
// and bring it back at the same endpoint with its objects, for tests of
// member failure.
//
// E2E tests use it through localfedtest, and `flotillactl local up` runs it in
// the foreground. Nothing here needs Docker or root.
package localfed
