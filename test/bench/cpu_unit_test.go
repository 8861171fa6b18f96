package bench

import (
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

func TestRoleOf(t *testing.T) {
	for _, tc := range []struct {
		p    localfed.Process
		want string
	}{
		{localfed.Process{Cluster: localfed.ControlPlaneName, Component: "kube-apiserver"}, roleCPAPIServer},
		{localfed.Process{Cluster: localfed.ControlPlaneName, Component: "kube-controller-manager"}, roleCPKCM},
		{localfed.Process{Cluster: "etcd", Component: "etcd"}, roleEtcd},
		{localfed.Process{Cluster: "member2", Component: "kube-apiserver"}, roleMemberAPIServers},
		{localfed.Process{Cluster: "member2", Component: "kube-controller-manager"}, roleMemberKCMs},
		{localfed.Process{Cluster: "member2", Component: "kwok"}, roleMemberOthers},
		{localfed.Process{Cluster: "member2", Component: "kube-scheduler"}, roleMemberOthers},
	} {
		if got := roleOf(tc.p); got != tc.want {
			t.Errorf("roleOf(%+v) = %s, want %s", tc.p, got, tc.want)
		}
	}
}

func TestCPUByRole(t *testing.T) {
	before := cpuByRole{roleEtcd: time.Second, roleScheduler: 2 * time.Second}
	after := cpuByRole{roleEtcd: 3 * time.Second, roleScheduler: 2500 * time.Millisecond, roleCPKCM: time.Second}
	d := after.minus(before)
	if d[roleEtcd] != 2*time.Second || d[roleScheduler] != 500*time.Millisecond || d[roleCPKCM] != time.Second {
		t.Errorf("minus: %v", d)
	}
	if d.total() != 3500*time.Millisecond {
		t.Errorf("total %v", d.total())
	}
	if got := perTemplateMS(d.total(), 7); got != 500 {
		t.Errorf("per template %v ms, want 500", got)
	}
}
