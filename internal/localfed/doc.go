// Package localfed runs a local federation made of real Kubernetes binaries on
// 127.0.0.1: a control-plane API server named karmada-apiserver with Flotilla's
// CRDs and a kube-controller-manager, plus member clusters member1 … memberN,
// each a kube-apiserver, kube-controller-manager, kube-scheduler and kwok with
// fake nodes whose pods go Running. Every member is registered in the control
// plane as a Push-mode Cluster, except the Options.PullMembers last ones:
// each of those has its agent (components/agent) running in this process as
// system:karmada:agent:<member>, with only that agent's rights, and the agent
// registers it in Pull mode; StopAgent and StartAgent take the agent away and
// bring it back. StopMember and StartMember take a member away
// and bring it back at the same endpoint with its objects, for tests of
// member failure.
//
// Options.Host adds a host cluster (API server, controller manager and
// scheduler, no nodes) whose Service range lies in 127.0.0.0/8, for tests
// that run real pods on it through test/nodeagent; Options.NoControlPlane
// leaves the control plane out, for tests that make their own and join the
// members to it.
//
// E2E tests use it through localfedtest, and `flotillactl local up` runs it in
// the foreground. Nothing here needs Docker or root.
package localfed
