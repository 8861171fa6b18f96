package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Crash-loop back-off: the kubelet's doubling, from 1s and capped at 10s so
// that tests do not wait minutes. A container that ran backoffReset without
// exiting starts over at the initial delay.
const (
	backoffInitial = time.Second
	backoffMax     = 10 * time.Second
	backoffReset   = 30 * time.Second
)

// errNoImage is returned for a container whose image maps to no binary.
var errNoImage = errors.New("image not mapped to a binary")

// container runs one container of a pod: its process, again and again as
// its restart policy says, and its probes. The fields after startedCh are
// guarded by the pod worker's mutex and make the container's status.
type container struct {
	w       *podWorker
	spec    *corev1.Container
	policy  corev1.RestartPolicy
	init    bool // an init container
	sidecar bool // an init container that restarts always and runs along

	startedCh chan struct{} // closed once the container has started
	startOnce sync.Once

	state, last corev1.ContainerState
	restarts    int32
	runs        int
	started     bool
	ready       bool
	id          string
	imageID     string
}

func newContainer(w *podWorker, spec *corev1.Container, policy corev1.RestartPolicy, init, sidecar bool, waiting string) *container {
	return &container{
		w: w, spec: spec, policy: policy, init: init, sidecar: sidecar,
		startedCh: make(chan struct{}),
		state:     corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}},
	}
}

// run runs the container until it is done for good (by its restart policy)
// or ctx ends, and returns its last exit code (-1 if it never ran).
func (c *container) run(ctx context.Context) int32 {
	backoff := backoffInitial
	exit := int32(-1)
	for {
		began := time.Now()
		code, err := c.runOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return code
		case errors.Is(err, errNoImage):
			<-ctx.Done() // the image map never changes
			return exit
		case err != nil:
			// Configuration that may come right later (a Secret, a key):
			// tried again without counting a restart.
			if !sleep(ctx, syncPeriod) {
				return exit
			}
			continue
		}
		exit = code
		if !restarts(c.policy, exit) {
			return exit
		}
		if time.Since(began) >= backoffReset {
			backoff = backoffInitial
		}
		c.backOff(backoff)
		if !sleep(ctx, backoff) {
			return exit
		}
		backoff = min(2*backoff, backoffMax)
	}
}

func restarts(policy corev1.RestartPolicy, exit int32) bool {
	return policy == corev1.RestartPolicyAlways || policy == corev1.RestartPolicyOnFailure && exit != 0
}

// runOnce starts the process, probes it, and waits until it exits, is
// killed for failing its liveness or startup probe, or ctx ends.
func (c *container) runOnce(ctx context.Context) (int32, error) {
	binary, ok := c.w.a.opts.Images[c.spec.Image]
	if !ok {
		c.setWaiting("ErrImagePull", fmt.Sprintf("image %q is not in the node agent's Images map, which has %v", c.spec.Image, imageNames(c.w.a.opts.Images)))
		return -1, errNoImage
	}
	var args []string
	if len(c.spec.Command) > 1 {
		args = append(args, c.spec.Command[1:]...)
	}
	args = append(args, c.spec.Args...)
	spec, err := c.w.processSpec(c.spec, binary, args, true, c.w.logPath(c.spec.Name))
	if err != nil {
		c.setWaiting("CreateContainerConfigError", err.Error())
		return -1, err
	}
	proc, err := launch(spec)
	_ = spec.output.Close() // the child has its own descriptor
	if err != nil {
		c.setWaiting("RunContainerError", err.Error())
		return -1, err
	}
	entrypoint := ""
	if len(c.spec.Command) > 0 {
		entrypoint = c.spec.Command[0]
	}
	c.w.log.Info("Started container", "container", c.spec.Name, "pid", proc.pid, "image", c.spec.Image,
		"entrypoint", entrypoint, "binary", binary, "args", spec.argv[1:])
	c.setRunning(proc.pid, binary)

	killed := make(chan string, 1)
	probeCtx, stopProbes := context.WithCancel(ctx)
	var probes sync.WaitGroup
	if c.init && !c.sidecar {
		c.setStarted() // init containers have no probes
	} else {
		probes.Go(func() { c.probe(probeCtx, killed) })
	}
	var reason string
	select {
	case <-proc.done:
	case <-ctx.Done():
		proc.stop(c.w.terminationGrace())
	case reason = <-killed:
		c.w.log.Info("Killing container", "container", c.spec.Name, "reason", reason)
		proc.stop(c.probeGrace())
	}
	stopProbes()
	probes.Wait()
	exit := proc.exitCode()
	c.w.log.Info("Container exited", "container", c.spec.Name, "pid", proc.pid, "exitCode", exit)
	c.setTerminated(exit, reason)
	return exit, nil
}

// probeGrace is how long a container killed for a failed probe gets.
func (c *container) probeGrace() time.Duration {
	pod := c.w.current()
	grace := deletionGrace(pod)
	for _, p := range []*corev1.Probe{c.spec.LivenessProbe, c.spec.StartupProbe} {
		if p != nil && p.TerminationGracePeriodSeconds != nil {
			grace = time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
		}
	}
	return min(grace, c.w.a.opts.MaxGracePeriod)
}

func (c *container) setWaiting(reason, message string) {
	c.w.mu.Lock()
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	c.w.mu.Unlock()
	c.w.kick()
}

func (c *container) setRunning(pid int, binary string) {
	c.w.mu.Lock()
	if c.runs > 0 {
		c.restarts++
	}
	c.runs++
	c.id = fmt.Sprintf("nodeagent://%s_%s_%s_%d", c.w.namespace, c.w.name, c.spec.Name, pid)
	c.imageID = "nodeagent://" + binary
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now()}}
	c.w.mu.Unlock()
	c.w.kick()
}

func (c *container) setStarted() {
	c.w.mu.Lock()
	c.started = true
	c.w.mu.Unlock()
	c.startOnce.Do(func() { close(c.startedCh) })
	c.w.kick()
}

func (c *container) setReady(ready bool) {
	c.w.mu.Lock()
	changed := c.ready != ready
	c.ready = ready
	c.w.mu.Unlock()
	if changed {
		c.w.kick()
		c.w.a.network.changed()
	}
}

func (c *container) setTerminated(exit int32, message string) {
	c.w.mu.Lock()
	t := &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Completed", Message: message, FinishedAt: now(), ContainerID: c.id}
	if exit != 0 {
		t.Reason = "Error"
	}
	if c.state.Running != nil {
		t.StartedAt = c.state.Running.StartedAt
	}
	c.state = corev1.ContainerState{Terminated: t}
	c.started = false
	c.ready = c.init && !c.sidecar && exit == 0
	c.w.mu.Unlock()
	c.w.kick()
	c.w.a.network.changed()
}

// backOff shows the container waiting to be restarted.
func (c *container) backOff(d time.Duration) {
	c.w.mu.Lock()
	c.last = c.state
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason:  "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c.spec.Name, c.w.name, c.w.namespace, c.w.uid),
	}}
	c.w.mu.Unlock()
	c.w.kick()
}

// logPath is where a container's output goes, every run appended.
func (w *podWorker) logPath(container string) string {
	return filepath.Join(w.dir, container+".log")
}

// openLog opens a log for appending.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

func imageNames(images map[string]string) []string {
	names := make([]string, 0, len(images))
	for name := range images {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
