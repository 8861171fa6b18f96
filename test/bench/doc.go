// Package bench measures propagation on a local federation: N Deployment
// templates and a PropagationPolicy in, N × 3 member Deployments with the
// scheduled replicas out. It reports throughput, latency from template
// creation to the member object, and the CPU seconds and peak memory of the
// controller-manager and the scheduler, which run as their own processes
// (built from components/*/cmd) so that /proc tells them apart; so does the
// webhook.
//
// Run every size, one iteration each (a scenario takes seconds to minutes,
// so b.N is 1):
//
//	make bench-propagation                  # BENCH_SIZES=1000,5000 by default
//	# or
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test ./test/bench -run '^$' \
//	    -bench BenchmarkPropagation -benchtime 1x -timeout 180m -v
//
// It also reports the whole machine's work per template: the CPU time of
// every process of the federation by role (the control plane's and the
// members' kube-apiservers, etcd, which all clusters share, the
// kube-controller-managers, the members' kube-schedulers and kwok, the
// controller-manager, the scheduler and the webhook), each in ms/template
// and summed (cpu-ms/template); beside it the whole machine's busy CPU time
// less the benchmark process's (machine-cpu-ms/template), which checks the
// sum and measures an older tree whose harness cannot name its processes;
// and the same for the cleanup: how long deleting every template takes
// until it is gone from the control plane and the members
// (delete-s) and the CPU that costs (delete-cpu-ms/template).
//
// The writes and CPU of a run are counted until the control plane has taken
// no write for 3 s after the last arrival (settle-s): status aggregation and
// events, which have a write rate of their own, follow the arrivals.
//
// -v shows each case's tables of control-plane requests, of the members'
// requests and of CPU per template (the benchmark log is cut to a few lines
// otherwise). -args -bench.cp-apiserver-args adds flags to the control
// plane's kube-apiserver, e.g. an audit policy and log
// (--audit-policy-file=... --audit-log-path=...) to see which component
// makes which request. One case:
// -bench 'BenchmarkPropagation/Divided/1000'; other sizes: -args
// -bench.sizes=300. Extra flags for the components, e.g. to compare settings
// back to back:
//
//	go test ./test/bench ... -args -bench.cm-args='--kube-api-qps=400 --kube-api-burst=800'
//
// The controller-manager as a container with a memory limit runs it: -args
// -bench.cm-memory-limit=300Mi puts it in a memory cgroup of that size
// (root only), where it sets its Go soft memory limit from the cgroup's and
// is killed, failing the run, if it goes over; -bench.cm-env=GOMEMLIMIT=...
// sets the soft limit alone.
//
// Profiles of a case, to see where the time goes: -args
// -bench.profile-dir=DIR writes, for each case, 30-second CPU profiles of
// the control-plane kube-apiserver, the controller-manager and the
// scheduler (starting -bench.profile-delay after the templates begin,
// length -bench.profile-seconds) and the controller-manager's heap once
// every member object has arrived; read them with go tool pprof.
//
// Without -bench only TestPropagation runs: 20 templates divided over the
// members, checked to arrive, so the harness stays tested in CI.
package bench
