package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// BenchmarkPropagation creates N Deployment templates at once in a fresh
// namespace with a PropagationPolicy for all of them, and waits until each of
// the 3 members holds every template with the scheduled replicas: Duplicated
// (3 replicas everywhere) or Divided by static weights 1:1:1 (1 each).
//
// The members are bare kube-apiservers (localfed's APIServerOnlyMembers): a
// member object is stored and nothing runs it, no ReplicaSets, no pods, no
// kwok. 5,000 templates × 3 members with real pods would spend the machine
// on member-side work that is not Flotilla's, and the figures would measure
// that.
//
// Reported per run:
//   - templates/s and member-objects/s: from the first creation to the last
//     member object's arrival (also ns/op);
//   - p50-ms and p99-ms: from a template's creation request to its member
//     object's informer event with the scheduled replicas, over every member
//     object;
//   - cm-cpu-s, sched-cpu-s, cp-apiserver-cpu-s: CPU seconds (user + system)
//     of the controller-manager, the scheduler and the control plane's
//     kube-apiserver during the run;
//   - cm-peak-MB, sched-peak-MB: VmHWM of the controller-manager and the
//     scheduler, reset before each run where the kernel allows (clear_refs);
//     otherwise the peak of the process's lifetime, cumulative over runs;
//   - cp-writes/template: writes to the control plane per template, with a
//     table of them by verb and resource in the log.
//
// Each run is followed by the deletion of its namespace and a wait until the
// members are empty again. Run it with -benchtime 1x: see the package doc.
func BenchmarkPropagation(b *testing.B) {
	var scenarios []scenario
	for field := range strings.SplitSeq(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n <= 0 {
			b.Fatalf("-bench.sizes: %q is not a positive template count", field)
		}
		for _, strategy := range []policyv1alpha1.ReplicaSchedulingType{
			policyv1alpha1.ReplicaSchedulingTypeDuplicated, policyv1alpha1.ReplicaSchedulingTypeDivided,
		} {
			scenarios = append(scenarios, scenario{strategy: strategy, templates: n, profiled: true})
		}
	}
	// The first propagation of a kind starts informers in the components
	// and in the members' clients: not what the first case should measure.
	bench.propagate(b, scenario{strategy: policyv1alpha1.ReplicaSchedulingTypeDivided, templates: 10}, func(bool) {})
	for _, s := range scenarios {
		b.Run(fmt.Sprintf("%s/%d", s.strategy, s.templates), func(b *testing.B) {
			b.StopTimer()
			runs := make([]result, 0, b.N)
			for range b.N {
				runs = append(runs, bench.propagate(b, s, func(on bool) {
					if on {
						b.StartTimer()
					} else {
						b.StopTimer()
					}
				}))
			}
			r := mean(runs)
			b.Logf("%s", r.summary())
			r.report(b)
		})
	}
}

// TestPropagation divides 20 templates over the members and checks that
// every one reaches every member with its share of the replicas: the
// benchmark's harness, kept working by CI.
func TestPropagation(t *testing.T) {
	s := scenario{strategy: policyv1alpha1.ReplicaSchedulingTypeDivided, templates: 20}
	r := bench.propagate(t, s, func(bool) {})
	if len(r.latencies) != s.templates*len(bench.members) {
		t.Errorf("%d member objects measured, want %d", len(r.latencies), s.templates*len(bench.members))
	}
	t.Logf("%s", r.summary())
}

// mean averages runs of the same scenario; latencies are pooled and peaks
// are the highest.
func mean(runs []result) result {
	m := runs[0]
	m.latencies = nil
	m.writes, m.deleteWrites = writeCounts{}, writeCounts{}
	m.cpu, m.deleteCPU = cpuByRole{}, cpuByRole{}
	var elapsed, cm, sched, apiserver, deleteElapsed, settled time.Duration
	for _, r := range runs {
		deleteElapsed += r.deleteElapsed
		settled += r.settled
		for k, v := range r.cpu {
			m.cpu[k] += v / time.Duration(len(runs))
		}
		for k, v := range r.deleteCPU {
			m.deleteCPU[k] += v / time.Duration(len(runs))
		}
		elapsed += r.elapsed
		cm += r.cm.cpu
		sched += r.sched.cpu
		apiserver += r.apiserver.cpu
		m.cm.peakRSS = max(m.cm.peakRSS, r.cm.peakRSS)
		m.sched.peakRSS = max(m.sched.peakRSS, r.sched.peakRSS)
		m.apiserver.peakRSS = max(m.apiserver.peakRSS, r.apiserver.peakRSS)
		m.peakReset = m.peakReset && r.peakReset
		m.latencies = append(m.latencies, r.latencies...)
		for k, v := range r.writes {
			m.writes[k] += v
		}
		for k, v := range r.deleteWrites {
			m.deleteWrites[k] += v
		}
	}
	n := time.Duration(len(runs))
	m.elapsed, m.cm.cpu, m.sched.cpu, m.apiserver.cpu = elapsed/n, cm/n, sched/n, apiserver/n
	m.deleteElapsed = deleteElapsed / n
	m.settled = settled / n
	for k := range m.writes {
		m.writes[k] /= float64(len(runs))
	}
	for k := range m.deleteWrites {
		m.deleteWrites[k] /= float64(len(runs))
	}
	slices.Sort(m.latencies)
	return m
}

const mb = 1 << 20

func (r result) report(b *testing.B) {
	secs := r.elapsed.Seconds()
	b.ReportMetric(secs, "wall-s")
	b.ReportMetric(float64(r.templates)/secs, "templates/s")
	b.ReportMetric(float64(r.memberObjects)/secs, "member-objects/s")
	b.ReportMetric(float64(r.percentile(0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(r.percentile(0.99).Milliseconds()), "p99-ms")
	b.ReportMetric(r.cm.cpu.Seconds(), "cm-cpu-s")
	b.ReportMetric(float64(r.cm.peakRSS)/mb, "cm-peak-MB")
	b.ReportMetric(r.sched.cpu.Seconds(), "sched-cpu-s")
	b.ReportMetric(float64(r.sched.peakRSS)/mb, "sched-peak-MB")
	b.ReportMetric(r.apiserver.cpu.Seconds(), "cp-apiserver-cpu-s")
	b.ReportMetric(r.writes.total()/float64(r.templates), "cp-writes/template")
	b.ReportMetric(r.writes.withoutEvents().total()/float64(r.templates), "cp-writes-no-events/template")
	b.ReportMetric(perTemplateMS(r.cpu.total(), r.templates), "cpu-ms/template")
	b.ReportMetric(perTemplateMS(r.machineCPU, r.templates), "machine-cpu-ms/template")
	for role, d := range r.cpu {
		b.ReportMetric(perTemplateMS(d, r.templates), role+"-cpu-ms/template")
	}
	b.ReportMetric(r.settled.Seconds(), "settle-s")
	b.ReportMetric(r.deleteElapsed.Seconds(), "delete-s")
	b.ReportMetric(perTemplateMS(r.deleteCPU.total(), r.templates), "delete-cpu-ms/template")
	b.ReportMetric(perTemplateMS(r.deleteMachineCPU, r.templates), "delete-machine-cpu-ms/template")
	b.ReportMetric(r.deleteWrites.total()/float64(r.templates), "delete-cp-writes/template")
}

// machineRow names the whole machine's CPU less the benchmark's in the
// summary's CPU tables.
const machineRow = "machine (less the benchmark)"

func (r result) summary() string {
	peaks := "since the run began"
	if !r.peakReset {
		peaks = "over the process lifetime"
	}
	return fmt.Sprintf("%d templates, %d member objects in %v: %.1f templates/s; latency p50 %v p99 %v\n"+
		"controller-manager %.1f CPU s, peak %.0f MB; scheduler %.1f CPU s, peak %.0f MB (peaks %s); control-plane kube-apiserver %.1f CPU s\n"+
		"control-plane requests until they settled %v after the last arrival, watches aside (%.0f writes, %.1f per template, %.1f without events):\n%s"+
		"members' requests meanwhile, summed over members, watches aside:\n%s"+
		"CPU of every process until then:\n%s"+
		"  %-34s %8.1f CPU s  %7.1f ms/template\n"+
		"deleting them all took %v; CPU meanwhile:\n%s"+
		"  %-34s %8.1f CPU s  %7.1f ms/template\n"+
		"control-plane requests while deleting (%.0f writes, %.1f per template):\n%s",
		r.templates, r.memberObjects, r.elapsed.Round(time.Millisecond), float64(r.templates)/r.elapsed.Seconds(),
		r.percentile(0.50).Round(time.Millisecond), r.percentile(0.99).Round(time.Millisecond),
		r.cm.cpu.Seconds(), float64(r.cm.peakRSS)/mb, r.sched.cpu.Seconds(), float64(r.sched.peakRSS)/mb, peaks,
		r.apiserver.cpu.Seconds(), r.settled.Round(100*time.Millisecond), r.writes.total(), r.writes.total()/float64(r.templates),
		r.writes.withoutEvents().total()/float64(r.templates), r.writes.table(r.templates),
		r.memberWrites.withoutLeases().table(r.templates), r.cpu.table(r.templates),
		machineRow, r.machineCPU.Seconds(), perTemplateMS(r.machineCPU, r.templates),
		r.deleteElapsed.Round(time.Millisecond), r.deleteCPU.table(r.templates),
		machineRow, r.deleteMachineCPU.Seconds(), perTemplateMS(r.deleteMachineCPU, r.templates),
		r.deleteWrites.total(), r.deleteWrites.total()/float64(r.templates), r.deleteWrites.table(r.templates))
}
