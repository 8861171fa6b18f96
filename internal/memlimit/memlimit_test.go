package memlimit

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-logr/logr"
)

func TestCgroupLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    int64
		wantErr bool
	}{
		{"no cgroup files", fstest.MapFS{}, 0, false},
		{"v2, own path", fstest.MapFS{
			"proc/self/cgroup":                          file("0::/kubepods/pod1/c1\n"),
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": file("314572800\n"),
			"sys/fs/cgroup/memory.max":                  file("max\n"),
		}, 314572800, false},
		{"v2, cgroup namespace: the mount's root is ours", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("314572800\n"),
		}, 314572800, false},
		{"v2 unlimited", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, 0, false},
		{"v1 memory controller, hybrid with an empty v2", fstest.MapFS{
			"proc/self/cgroup": file("9:name=systemd:/\n4:memory:/kubepods/pod1/c1\n0::/\n"),
			"sys/fs/cgroup/memory/kubepods/pod1/c1/memory.limit_in_bytes": file("268435456\n"),
		}, 268435456, false},
		{"v1 controllers listed together", fstest.MapFS{
			"proc/self/cgroup": file("3:cpu,memory:/c\n"),
			"sys/fs/cgroup/memory/c/memory.limit_in_bytes": file("1048576"),
		}, 1048576, false},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 0, false},
		{"garbage", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CgroupLimit(tt.files)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("CgroupLimit = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSetRespectsGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "100MiB")
	if got, err := Set(DefaultRatio); got != 0 || err != nil {
		t.Errorf("Set with GOMEMLIMIT = %d, %v; want it left alone", got, err)
	}
}

func TestSetRejectsRatio(t *testing.T) {
	if _, err := Set(1.5); !errors.Is(err, ErrInvalidRatio) {
		t.Error("Set(1.5) accepted")
	}
}

func TestApply(t *testing.T) {
	err := Apply(-0.5, logr.Discard())
	if !errors.Is(err, ErrInvalidRatio) || !strings.Contains(err.Error(), "--memory-limit-ratio") {
		t.Errorf("Apply(-0.5) = %v, want an error naming --memory-limit-ratio", err)
	}
	t.Setenv("GOMEMLIMIT", "100MiB")
	if err := Apply(DefaultRatio, logr.Discard()); err != nil {
		t.Errorf("Apply with GOMEMLIMIT = %v", err)
	}
}
