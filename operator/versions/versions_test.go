package versions

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/internal/release"
)

func TestTable(t *testing.T) {
	old := Release{Version: "v0.1.0", Kubernetes: "v1.36.4", Etcd: "3.6.10-0"}
	own := Release{Version: "v0.2.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}
	table, err := New(own, old)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v0.1.0", "v0.2.0"}, table.Versions()); diff != "" {
		t.Errorf("Versions (-want +got):\n%s", diff)
	}
	tests := []struct {
		pinned  string
		want    Release
		wantErr string
	}{
		{"", own, ""},
		{"v0.1.0", old, ""},
		{"v0.2.0", own, ""},
		{"v0.3.0", Release{}, "version v0.3.0 is not in this operator's version table (known: v0.1.0, v0.2.0)"},
	}
	for _, tt := range tests {
		got, err := table.Resolve(tt.pinned)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Resolve(%q) error = %v, want %q", tt.pinned, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %v, %v; want %v", tt.pinned, got, err, tt.want)
		}
	}
	if _, err := New(own, own); err == nil {
		t.Error("New accepted a version listed twice")
	}
	if _, err := New(Release{Version: "latest"}); err == nil {
		t.Error("New accepted an unparsable version")
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"v0.1.0", "v0.2.0", -1},
		{"v0.10.0", "v0.9.0", 1},
		{"v1.0.0-rc.1", "v1.0.0", -1},
		{"v1.0.0", "v1.0.0", 0},
		{"garbage", "v0.1.0", -1},
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestImages(t *testing.T) {
	r := Release{Version: "v0.2.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}
	tests := map[release.Component]string{
		release.Etcd:                  "registry.k8s.io/etcd:3.6.16-0",
		release.KubeAPIServer:         "registry.k8s.io/kube-apiserver:v1.37.2",
		release.KubeControllerManager: "registry.k8s.io/kube-controller-manager:v1.37.2",
		release.ControllerManager:     "ghcr.io/flotilla-io/controller-manager:v0.2.0",
	}
	for c, want := range tests {
		if got := r.Image(c, ""); got != want {
			t.Errorf("Image(%s) = %q, want %q", c, got, want)
		}
	}
	if got, want := r.Image(release.Scheduler, "mirror.example"), "mirror.example/scheduler:v0.2.0"; got != want {
		t.Errorf("Image with private registry = %q, want %q", got, want)
	}
}
