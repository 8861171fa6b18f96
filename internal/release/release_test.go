package release

import "testing"

func TestImage(t *testing.T) {
	tests := []struct {
		c        Component
		registry string
		tag      string
		want     string
		binary   string
	}{
		{ControllerManager, "", "v0.1.0", "ghcr.io/flotilla-io/controller-manager:v0.1.0", "flotilla-controller-manager"},
		{Scheduler, "mirror.example/flotilla/", "v0.2.0", "mirror.example/flotilla/scheduler:v0.2.0", "flotilla-scheduler"},
		{KubeAPIServer, "", "v1.37.2", "registry.k8s.io/kube-apiserver:v1.37.2", "kube-apiserver"},
		{Etcd, "mirror.example", "3.6.16-0", "mirror.example/etcd:3.6.16-0", "etcd"},
		{Flotillactl, "", "v0.1.0", "ghcr.io/flotilla-io/flotillactl:v0.1.0", "flotillactl"},
	}
	for _, tt := range tests {
		if got := tt.c.Image(tt.registry, tt.tag); got != tt.want {
			t.Errorf("%s.Image(%q, %q) = %q, want %q", tt.c, tt.registry, tt.tag, got, tt.want)
		}
		if got := tt.c.Binary(); got != tt.binary {
			t.Errorf("%s.Binary() = %q, want %q", tt.c, got, tt.binary)
		}
	}
}
