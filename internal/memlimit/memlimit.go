// Package memlimit gives the Go runtime a soft memory limit below the
// memory limit of the container a component runs in. Without one, Go lets
// the heap grow to twice what is live before collecting, and a controller
// whose caches hold a few hundred megabytes is killed at its limit long
// before it needs the memory; with one, the collector works harder as the
// limit comes near instead.
package memlimit

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// DefaultRatio leaves a tenth of the container's limit to what the Go
// runtime does not count: stacks of threads in C, the binary, page tables.
const DefaultRatio = 0.9

// ErrInvalidRatio: a ratio outside [0, 1].
var ErrInvalidRatio = errors.New("memory limit ratio must be between 0 and 1")

// unlimitedV1 is where cgroup v1 reports "no limit": the largest page
// multiple of a signed 64-bit count.
const unlimitedV1 = int64(1) << 62

// Set sets Go's soft memory limit to ratio times the memory limit of the
// process's cgroup, unless GOMEMLIMIT is set or ratio is 0. It returns the
// limit it set, 0 when it set none. An error other than ErrInvalidRatio
// means the limit could not be read; the process can go on without one.
func Set(ratio float64) (int64, error) {
	if ratio < 0 || ratio > 1 {
		return 0, fmt.Errorf("%w: %v", ErrInvalidRatio, ratio)
	}
	if ratio == 0 || os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit, err := CgroupLimit(os.DirFS("/"))
	if err != nil || limit == 0 {
		return 0, err
	}
	soft := int64(float64(limit) * ratio)
	debug.SetMemoryLimit(soft)
	return soft, nil
}

// CgroupLimit reads the memory limit of the calling process's cgroup from
// root (the file system's root): cgroup v2's memory.max, else v1's
// memory.limit_in_bytes, each first under the process's own cgroup path
// and then at the mount's root, which is the process's own cgroup inside a
// container with a cgroup namespace. 0 means no limit.
func CgroupLimit(root fs.FS) (int64, error) {
	v2Path, v1Path, err := ownCgroups(root)
	if err != nil {
		return 0, err
	}
	candidates := []struct {
		file string
		v1   bool
	}{
		{path.Join("sys/fs/cgroup", v2Path, "memory.max"), false},
		{"sys/fs/cgroup/memory.max", false},
		{path.Join("sys/fs/cgroup/memory", v1Path, "memory.limit_in_bytes"), true},
		{"sys/fs/cgroup/memory/memory.limit_in_bytes", true},
	}
	for _, c := range candidates {
		raw, err := fs.ReadFile(root, c.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", c.file, err)
		}
		value := strings.TrimSpace(string(raw))
		if value == "max" {
			return 0, nil
		}
		limit, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading %s: %q is not a byte count", c.file, value)
		}
		if c.v1 && limit >= unlimitedV1 || limit <= 0 || limit == math.MaxInt64 {
			return 0, nil
		}
		return limit, nil
	}
	return 0, nil
}

// ownCgroups reads the process's cgroup v2 path and its cgroup v1 memory
// controller path from /proc/self/cgroup; both are "/" when absent.
func ownCgroups(root fs.FS) (v2, v1 string, err error) {
	f, err := root.Open("proc/self/cgroup")
	if errors.Is(err, fs.ErrNotExist) {
		return "/", "/", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	defer func() { _ = f.Close() }()
	v2, v1 = "/", "/"
	s := bufio.NewScanner(f)
	for s.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(s.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case controllerListed(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	if err := s.Err(); err != nil {
		return "", "", fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	return v2, v1, nil
}

func controllerListed(list, controller string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == controller {
			return true
		}
	}
	return false
}

// BindFlag registers --memory-limit-ratio on flags.
func BindFlag(flags *flag.FlagSet) *float64 {
	return flags.Float64("memory-limit-ratio", DefaultRatio,
		"Fraction of the container's memory limit (cgroup) given to Go as its soft memory limit, so that the garbage collector works harder near the limit instead of the process being killed; 0 disables it, and GOMEMLIMIT overrides it.")
}

// Apply sets the soft memory limit as Set does and logs the outcome. Only
// an invalid ratio is an error; a limit that cannot be read is logged, and
// the process goes on without one.
func Apply(ratio float64, logger logr.Logger) error {
	limit, err := Set(ratio)
	switch {
	case errors.Is(err, ErrInvalidRatio):
		return fmt.Errorf("--memory-limit-ratio: %w", err)
	case err != nil:
		logger.Error(err, "Running without a soft memory limit")
	case limit > 0:
		logger.Info("Set Go's soft memory limit from the container's memory limit", "bytes", limit)
	}
	return nil
}
