package nodeagent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestExecProbeNeedsAKnownBinary(t *testing.T) {
	a := &Agent{opts: Options{Images: map[string]string{
		"example/etcd:3":   "/bin/k8s/etcd",
		"example/server:1": "/build/server",
	}}}
	c := &container{w: &podWorker{a: a}, spec: &corev1.Container{Name: "server", Image: "example/server:1"}}
	for _, tc := range []struct {
		command string
		want    string
		ok      bool
	}{
		{"server", "/build/server", true},
		{"/usr/local/bin/server", "/build/server", true},
		{"etcd", "/bin/k8s/etcd", true},
		{"/bin/k8s/etcd", "/bin/k8s/etcd", true},
		{"/bin/sh", "", false},
		{"etcdctl", "", false},
	} {
		got, ok := c.execBinary(tc.command)
		if got != tc.want || ok != tc.ok {
			t.Errorf("execBinary(%q) = %q, %v; want %q, %v", tc.command, got, ok, tc.want, tc.ok)
		}
	}
	err := c.checkExec(t.Context(), []string{"/bin/sh", "-c", "true"})
	if err == nil || !strings.Contains(err.Error(), `"/bin/sh" is not a binary the node agent knows`) {
		t.Errorf("exec probe of /bin/sh: %v, want an error naming it", err)
	}
}
