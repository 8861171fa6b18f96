package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// syncPeriod is how often a pod's volumes and status are brought up to date
// without being asked.
const syncPeriod = time.Second

// hostIP is the node's address, and the address of host-network pods.
const hostIP = "127.0.0.1"

// reasonCreating is why a container waits while its pod is set up.
const reasonCreating = "ContainerCreating"

// podWorker runs one pod: its run loop follows the pod object (volumes,
// status, deletion) while live, on a goroutine of its own, sets the pod up
// and runs its containers.
type podWorker struct {
	a         *Agent
	uid       types.UID
	namespace string
	name      string
	dir       string
	log       logr.Logger
	notify    chan struct{}
	// dormant is set for a pod already Succeeded, Failed or being deleted
	// when first seen, as after an agent's restart: it is not run again,
	// only deleted when asked.
	dormant bool

	volMu sync.Mutex // one volume sync at a time

	mu          sync.Mutex
	pod         *corev1.Pod // the newest the informer has
	written     *corev1.Pod // the API server's answer to the last status write
	gone        bool        // deleted from the API
	ip          string
	startTime   metav1.Time
	volumeDirs  map[string]string
	initialized bool
	finished    bool          // every container is done for good
	grace       time.Duration // for stopping the containers; < 0 until the pod stops
	initConts   []*container
	containers  []*container
}

func newPodWorker(a *Agent, pod *corev1.Pod) *podWorker {
	w := &podWorker{
		a:         a,
		uid:       pod.UID,
		namespace: pod.Namespace,
		name:      pod.Name,
		dir:       a.podDir(pod),
		log:       a.log.WithValues("pod", pod.Namespace+"/"+pod.Name),
		notify:    make(chan struct{}, 1),
		pod:       pod,
		startTime: now(),
		grace:     -1,
		dormant: pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
			pod.DeletionTimestamp != nil,
	}
	initPolicy := corev1.RestartPolicyOnFailure
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		initPolicy = corev1.RestartPolicyNever
	}
	firstWait := reasonCreating
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		sidecar := spec.RestartPolicy != nil && *spec.RestartPolicy == corev1.ContainerRestartPolicyAlways
		policy := initPolicy
		if sidecar {
			policy = corev1.RestartPolicyAlways
		}
		w.initConts = append(w.initConts, newContainer(w, spec, policy, true, sidecar, firstWait))
		firstWait = "PodInitializing"
	}
	for i := range pod.Spec.Containers {
		w.containers = append(w.containers, newContainer(w, &pod.Spec.Containers[i], pod.Spec.RestartPolicy, false, false, firstWait))
	}
	return w
}

// update hands the worker a newer pod object, or says it was deleted.
func (w *podWorker) update(pod *corev1.Pod, deleted bool) {
	w.mu.Lock()
	w.pod = pod
	w.gone = w.gone || deleted
	w.mu.Unlock()
	w.kick()
}

// kick asks the run loop for a sync.
func (w *podWorker) kick() { kick(w.notify) }

// current is the newest pod object.
func (w *podWorker) current() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

// run follows the pod until it is deleted or ctx ends (the agent stops), and
// stops its containers then.
func (w *podWorker) run(ctx context.Context) {
	lifeCtx, stopLife := context.WithCancel(context.Background())
	defer stopLife()
	lifeDone := make(chan struct{})
	if w.dormant {
		close(lifeDone)
	} else {
		go func() {
			defer close(lifeDone)
			w.live(lifeCtx)
		}()
	}
	ticker := time.NewTicker(syncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			// The agent stops; the pod's volumes stay for the next one.
			w.stop(stopLife, lifeDone, stopGrace)
			w.release(false)
			return
		case <-w.notify:
		case <-ticker.C:
		}
		w.mu.Lock()
		pod, gone := w.pod, w.gone
		w.mu.Unlock()
		switch {
		case gone:
			w.stop(stopLife, lifeDone, stopGrace)
			w.release(true)
			return
		case pod.DeletionTimestamp != nil:
			w.stop(stopLife, lifeDone, deletionGrace(pod))
			w.deleteFinally(ctx, pod)
			w.release(true)
			return
		case w.dormant:
			continue
		}
		if w.volumesReady() {
			if _, err := w.syncVolumes(ctx, pod); err != nil {
				w.log.V(1).Info("Updating volumes", "error", err.Error())
			}
		}
		w.writeStatus(ctx)
	}
}

// live sets the pod up, runs its init containers one after the other, then
// all its containers, until they are done for good or ctx ends.
func (w *podWorker) live(ctx context.Context) {
	if !w.setUp(ctx) {
		return
	}
	sidecarCtx, stopSidecars := context.WithCancel(ctx)
	var sidecars sync.WaitGroup
	defer func() {
		stopSidecars()
		sidecars.Wait()
	}()
	for _, c := range w.initConts {
		if c.sidecar {
			sidecars.Go(func() { c.run(sidecarCtx) })
			select {
			case <-c.startedCh:
				continue
			case <-ctx.Done():
				return
			}
		}
		if exit := c.run(ctx); ctx.Err() != nil {
			return
		} else if exit != 0 {
			// Only a pod that never restarts gets here: a failed init
			// container fails it.
			w.finish()
			return
		}
	}
	w.mu.Lock()
	w.initialized = true
	w.mu.Unlock()
	w.kick()

	var wg sync.WaitGroup
	for _, c := range w.containers {
		wg.Go(func() { c.run(ctx) })
	}
	wg.Wait()
	if ctx.Err() == nil {
		w.finish()
	}
}

// setUp gives the pod its IP and writes its volumes, retrying until every
// volume can be written (a Secret may come later) or ctx ends.
func (w *podWorker) setUp(ctx context.Context) bool {
	pod := w.current()
	ip := hostIP
	if !pod.Spec.HostNetwork {
		var err error
		if ip, err = w.a.block.podIP(); err != nil {
			w.setWaitingAll(reasonCreating, err.Error())
			return false
		}
	}
	w.mu.Lock()
	w.ip = ip
	w.mu.Unlock()
	// The pod's own DNS name resolves before its processes start.
	w.a.network.sync()
	w.kick()
	var lastErr string
	for {
		dirs, err := w.syncVolumes(ctx, w.current())
		if err == nil {
			w.mu.Lock()
			w.volumeDirs = dirs
			w.mu.Unlock()
			return true
		}
		if err.Error() != lastErr {
			lastErr = err.Error()
			w.log.Info("Waiting for volumes", "error", lastErr)
			w.setWaitingAll(reasonCreating, lastErr)
		}
		if !sleep(ctx, syncPeriod) {
			return false
		}
	}
}

// volumesReady says whether the volumes are set up and still in use.
func (w *podWorker) volumesReady() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.volumeDirs != nil && !w.finished
}

// finish marks the pod done: Succeeded or Failed by its containers' exits.
func (w *podWorker) finish() {
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	w.kick()
}

// stop ends live, the containers getting grace (capped) between SIGTERM
// and SIGKILL, and waits for it.
func (w *podWorker) stop(stopLife context.CancelFunc, lifeDone <-chan struct{}, grace time.Duration) {
	w.mu.Lock()
	w.grace = min(grace, w.a.opts.MaxGracePeriod)
	w.mu.Unlock()
	stopLife()
	<-lifeDone
}

// terminationGrace is the grace a container gets when it is stopped: the
// one the pod stops with, or, for a sidecar stopped because the other
// containers are done, the pod's own.
func (w *podWorker) terminationGrace() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.grace >= 0 {
		return w.grace
	}
	return min(deletionGrace(w.pod), w.a.opts.MaxGracePeriod)
}

// deletionGrace is the grace period the pod's deletion asked for.
func deletionGrace(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

// deleteFinally removes the pod object once its processes are gone, as the
// kubelet's last delete with grace 0 does, trying again until ctx ends.
func (w *podWorker) deleteFinally(ctx context.Context, pod *corev1.Pod) {
	for {
		err := w.a.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		// A conflict is a failed precondition: the pod of that name is
		// another one already.
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			w.log.V(1).Info("Pod deleted")
			return
		}
		w.log.Error(err, "Deleting the pod")
		if !sleep(ctx, syncPeriod) {
			return
		}
	}
}

// release gives back what the pod held: its IP and its tokens, and its
// volumes when it is deleted. Its logs stay.
func (w *podWorker) release(deleted bool) {
	w.mu.Lock()
	ip := w.ip
	w.ip = ""
	w.mu.Unlock()
	if ip != "" && ip != hostIP {
		w.a.block.free(ip)
	}
	w.a.tokens.forget(w.uid)
	if deleted {
		_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
	}
}

// view is what the network needs of the pod; false once it is gone.
func (w *podWorker) view() (podView, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone || w.dormant || w.ip == "" {
		return podView{}, false
	}
	return podView{pod: w.pod, ip: w.ip, ready: w.readyLocked(w.pod)}, true
}

// setWaitingAll shows why no container could start yet.
func (w *podWorker) setWaitingAll(reason, message string) {
	w.mu.Lock()
	for _, c := range append(append([]*container{}, w.initConts...), w.containers...) {
		if c.runs == 0 {
			c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		}
	}
	w.mu.Unlock()
	w.kick()
}

// writeStatus writes the pod's status through the status subresource when
// it differs from what the API server has.
func (w *podWorker) writeStatus(ctx context.Context) {
	w.mu.Lock()
	base := w.pod
	if w.written != nil && newerThan(w.written, base) {
		base = w.written
	}
	status := w.statusLocked(base)
	w.mu.Unlock()
	if equality.Semantic.DeepEqual(&status, &base.Status) {
		return
	}
	pod := base.DeepCopy()
	pod.Status = status
	pods := w.a.client.CoreV1().Pods(pod.Namespace)
	updated, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// Someone else wrote the pod: start again from theirs.
		if updated, err = pods.Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
			w.mu.Lock()
			w.written = updated
			w.mu.Unlock()
			w.kick()
		}
		return
	}
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			w.log.Error(err, "Writing pod status")
		}
		return
	}
	w.mu.Lock()
	w.written = updated
	w.mu.Unlock()
}

// newerThan compares resource versions, which the API server makes from
// etcd's revisions; anything else counts as older.
func newerThan(a, b *corev1.Pod) bool {
	x, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	y, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && x > y
}

// now is the current time as the API server keeps it, to the second, so
// that a status read back compares equal to the one written.
func now() metav1.Time {
	return metav1.NewTime(time.Now().Truncate(time.Second))
}
