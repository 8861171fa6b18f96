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
// Options.Metrics gives every member a metrics.k8s.io API: kwok simulates
// the CPU and memory of every container and serves kubelet-style resource
// metrics per node, which a metrics-server per member scrapes every 10s
// (node and pod metrics, so kubectl top works against a member).
// Options.MetricsAdapter serves metrics.k8s.io and custom.metrics.k8s.io in
// the control plane from components/metrics-adapter, aggregated over the
// members. The simulated usage is the knob of autoscaling tests:
// SetPodUsage(ctx, namespace, usage) annotates every member's nodes with
// cpu.usage.localfed.flotilla.io/<namespace> (and memory.…), which every
// container of the namespace's pods then uses, running pods included and
// without restarting them; a pod's own kwok.x-k8s.io/usage-cpu annotation
// wins over it. A change shows in the metrics within about 20 seconds.
//
// kwok also plays every member node's kubelet for the member's API server
// (TLS on loopback, with the member's CA): pod logs and attach show the
// member's stand-in container output, which Cluster.AppendContainerOutput
// adds to, and exec runs the command on this machine in the member's exec
// directory (kwokkubelet.go), so kubectl logs, exec and attach work against
// a member and through the control plane's cluster proxy.
//
// E2E tests use it through localfedtest, and `flotillactl local up` runs it in
// the foreground. Nothing here needs Docker or root.
package localfed
