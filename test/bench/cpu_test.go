package bench

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

// The roles CPU time is reported by: every process of the machine's
// federation, grouped by what it does, so that the sum is the whole
// machine's work per template.
const (
	roleCPAPIServer      = "cp-apiserver"
	roleCPKCM            = "cp-kube-controller-manager"
	roleEtcd             = "etcd"
	roleMemberAPIServers = "member-apiservers"
	roleMemberKCMs       = "member-kube-controller-managers"
	roleMemberOthers     = "member-schedulers-kwok"
	roleControllerMgr    = "controller-manager"
	roleScheduler        = "scheduler"
	roleWebhook          = "webhook"
)

// roleOf names the role of one of the federation's processes. etcd is one
// process for every cluster, so its time is not split between them.
func roleOf(p localfed.Process) string {
	cp := p.Cluster == localfed.ControlPlaneName
	switch {
	case p.Component == "etcd":
		return roleEtcd
	case cp && p.Component == "kube-apiserver":
		return roleCPAPIServer
	case cp && p.Component == "kube-controller-manager":
		return roleCPKCM
	case p.Component == "kube-apiserver":
		return roleMemberAPIServers
	case p.Component == "kube-controller-manager":
		return roleMemberKCMs
	case p.Component == "webhook":
		return roleWebhook
	}
	return roleMemberOthers
}

// cpuByRole is CPU time (user + system) per role.
type cpuByRole map[string]time.Duration

func (c cpuByRole) total() time.Duration {
	var t time.Duration
	for _, v := range c {
		t += v
	}
	return t
}

func (c cpuByRole) minus(before cpuByRole) cpuByRole {
	out := cpuByRole{}
	for k, v := range c {
		out[k] = v - before[k]
	}
	return out
}

// table prints milliseconds per template by role, largest first, and the sum.
func (c cpuByRole) table(templates int) string {
	roles := slices.Collect(maps.Keys(c))
	slices.SortFunc(roles, func(a, b string) int { return int(c[b] - c[a]) })
	var sb strings.Builder
	for _, r := range roles {
		fmt.Fprintf(&sb, "  %-34s %8.1f CPU s  %7.1f ms/template\n", r, c[r].Seconds(), perTemplateMS(c[r], templates))
	}
	fmt.Fprintf(&sb, "  %-34s %8.1f CPU s  %7.1f ms/template\n", "all", c.total().Seconds(), perTemplateMS(c.total(), templates))
	return sb.String()
}

func perTemplateMS(d time.Duration, templates int) float64 {
	if templates == 0 {
		return 0
	}
	return float64(d.Milliseconds()) / float64(templates)
}

// cpu reads every process's CPU time, by role: the federation's and the
// two Flotilla components the benchmark runs.
func (e *env) cpu() (cpuByRole, error) {
	out := cpuByRole{}
	for _, p := range e.fed.Processes() {
		u, err := procStats{pid: p.PID}.read()
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", p.Component, p.Cluster, err)
		}
		out[roleOf(p)] += u.cpu
	}
	for role, p := range map[string]procStats{roleControllerMgr: e.cm.procStats, roleScheduler: e.sched.procStats} {
		u, err := p.read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", role, err)
		}
		out[role] += u.cpu
	}
	return out, nil
}

// machineCPU is the whole machine's busy CPU time less the benchmark
// process's own: every CPU's user, nice, system, irq and softirq time
// (guest time is counted in user already; steal is other machines' work).
// It checks the per-role sum for processes the roles miss, and measures a
// tree whose harness cannot name its processes (an older commit's, for a
// before-and-after figure). Anything else running meanwhile counts too.
func machineCPU() (time.Duration, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	stat, err := fs.Stat()
	if err != nil {
		return 0, fmt.Errorf("/proc/stat: %w", err)
	}
	t := stat.CPUTotal
	busy := t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ
	self, err := procStats{pid: os.Getpid()}.read()
	if err != nil {
		return 0, err
	}
	return time.Duration(busy*float64(time.Second)) - self.cpu, nil
}
