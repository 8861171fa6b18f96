// Package writecost measures what one write costs the control plane's
// kube-apiserver, kind by kind: create, update and status patch of each of
// Flotilla's busiest CRDs (ResourceBinding, Work, PropagationPolicy) against
// a ConfigMap of the same size, in each wire encoding the server takes
// (JSON; protobuf for the ConfigMap; CBOR where the server enables it).
// A Deployment as a Work's manifest reaches a member is written both by
// POST/PUT and by server-side apply (apply-create, apply-update), the way
// the execution controller writes it, to weigh what apply costs the
// member's API server.
//
// Each case runs for a fixed time with a fixed number of concurrent
// clients, as fast as the server answers, on a control plane of its own
// (kube-apiserver, etcd, kube-controller-manager and Flotilla's webhook, as
// localfed starts it; no controller of Flotilla's reacts to the writes). It
// reports requests/s at saturation and the CPU the API server and etcd spent
// per request, from /proc:
//
//	make bench-writecost
//	# or
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test ./test/bench/writecost \
//	    -run '^$' -bench . -benchtime 1x -timeout 60m -v
//
// After each setting's cases, "floor" adds up what the writes of one
// Deployment propagated to 3 members cost at the rates just measured: the
// 13 control-plane writes the propagation benchmark counts besides events
// (the user's create, the detector's claim and binding, the scheduler's
// schedule and condition, a Work and its status per member, the binding's
// and the template's aggregated status) and an apply per member, each
// weighed by its nearest case (floor_test.go maps them). It is the least
// the federation's API servers and etcd can spend per template on
// Karmada's API, before any controller, watch, read or event; set beside
// the propagation benchmark's cpu-ms/template, it shows how much of a
// template's cost is left to win elsewhere.
//
// The settings compared are control planes started with different
// kube-apiserver flags: "default" (as the operator's chart and local up
// start it) and "cbor" (--feature-gates=CBORServingAndStorage=true, which
// adds CBOR as a wire format and the storage encoding of custom resources).
// -args -writecost.duration=20s sets each case's length, -writecost.clients
// the concurrency, -writecost.profile-dir=DIR writes a CPU profile of the
// API server for every case (read with go tool pprof).
//
// The webhook runs in the test process, so its own CPU is not in the
// figures; the API server's side of calling it is.
//
// Without -bench, TestWriteCost runs every case for a moment on the default
// setting, so that the harness stays tested in CI.
package writecost
