package names

import "testing"

func TestWork(t *testing.T) {
	tests := []struct {
		namespace, name, kind string
		want                  string
	}{
		{"default", "nginx", "Deployment", "nginx-687f7fb96f"},
		{"", "system:foo", "ClusterRole", "system.foo-5f7d88f69"},
		{"team-a", "My-Config", "ConfigMap", "my-config-5f85bf9765"},
	}
	for _, tt := range tests {
		if got := Work(tt.namespace, tt.name, tt.kind); got != tt.want {
			t.Errorf("Work(%q, %q, %q) = %q, want %q", tt.namespace, tt.name, tt.kind, got, tt.want)
		}
	}
}

func TestBinding(t *testing.T) {
	tests := []struct{ name, kind, want string }{
		{"nginx", "Deployment", "nginx-deployment"},
		{"system:foo", "ClusterRole", "system.foo-clusterrole"},
		{"Web", "StatefulSet", "web-statefulset"},
	}
	for _, tt := range tests {
		if got := Binding(tt.name, tt.kind); got != tt.want {
			t.Errorf("Binding(%q, %q) = %q, want %q", tt.name, tt.kind, got, tt.want)
		}
	}
}

func TestExecutionSpace(t *testing.T) {
	if got := ExecutionSpace("member1"); got != "karmada-es-member1" {
		t.Errorf("ExecutionSpace = %q", got)
	}
	tests := []struct {
		namespace   string
		wantCluster string
		wantOK      bool
	}{
		{"karmada-es-member1", "member1", true},
		{"karmada-es-", "", false},
		{"default", "", false},
	}
	for _, tt := range tests {
		c, ok := ClusterOfExecutionSpace(tt.namespace)
		if c != tt.wantCluster || ok != tt.wantOK {
			t.Errorf("ClusterOfExecutionSpace(%q) = %q, %v; want %q, %v", tt.namespace, c, ok, tt.wantCluster, tt.wantOK)
		}
	}
}

func TestIsReserved(t *testing.T) {
	tests := map[string]bool{
		"karmada-system": true, "karmada-cluster": true, "karmada-es-m1": true,
		"kube-system": true, "kube-public": true, "default": false, "karmada-apps": false,
	}
	for ns, want := range tests {
		if got := IsReserved(ns); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", ns, got, want)
		}
	}
}
