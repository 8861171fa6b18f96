package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// memoryCgroup is a memory cgroup of its own for one component, as a
// container with a memory limit gives it: the component's
// --memory-limit-ratio reads the limit, and going over it gets the
// component killed, failing the run.
type memoryCgroup struct {
	dir string
}

// cgroupRoot is where cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// newMemoryCgroup makes the cgroup name limited to limit bytes: under the
// cgroup v2 hierarchy when it has the memory controller, else under cgroup
// v1's memory hierarchy. It needs root, or a delegated cgroup tree.
func newMemoryCgroup(name string, limit int64) (*memoryCgroup, error) {
	// cgroup v1's files, unless v2 has the memory controller.
	dir, limitFile, swapFile := filepath.Join(cgroupRoot, "memory", name), "memory.limit_in_bytes", "memory.swappiness"
	controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers"))
	switch {
	case err == nil && slices.Contains(strings.Fields(string(controllers)), "memory"):
		dir, limitFile, swapFile = filepath.Join(cgroupRoot, name), "memory.max", "memory.swap.max"
	case err != nil && !os.IsNotExist(err):
		return nil, fmt.Errorf("reading cgroup controllers: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making cgroup %s (needs root and cgroup v1's memory hierarchy, or v2 with the memory controller): %w", dir, err)
	}
	cg := &memoryCgroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("limiting cgroup %s: %w", dir, err), cg.remove())
	}
	// No swapping: the limit is the memory the component may use.
	_ = os.WriteFile(filepath.Join(dir, swapFile), []byte("0"), 0o644)
	return cg, nil
}

// wrap returns the command that runs binary with args inside the cgroup:
// a shell moves itself in, then becomes binary (same pid, so its figures
// are the component's).
func (c *memoryCgroup) wrap(binary string, args []string) (string, []string) {
	script := `echo $$ > "$CGROUP_PROCS" && exec "$0" "$@"`
	return "/bin/sh", append([]string{"-c", script, binary}, args...)
}

// env is the environment wrap's script needs.
func (c *memoryCgroup) env() []string {
	return []string{"CGROUP_PROCS=" + filepath.Join(c.dir, "cgroup.procs")}
}

// remove deletes the cgroup once nothing runs in it.
func (c *memoryCgroup) remove() error {
	if err := os.Remove(c.dir); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing cgroup %s: %w", c.dir, err)
	}
	return nil
}
