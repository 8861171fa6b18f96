package nodeagent

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// statusLocked is the pod's status as the kubelet would write it, starting
// from base's so that what others wrote (conditions, QoS class) stays. Call
// with w.mu held.
func (w *podWorker) statusLocked(base *corev1.Pod) corev1.PodStatus {
	s := *base.Status.DeepCopy()
	s.HostIP = hostIP
	s.HostIPs = []corev1.HostIP{{IP: hostIP}}
	if w.ip != "" {
		s.PodIP = w.ip
		s.PodIPs = []corev1.PodIP{{IP: w.ip}}
	}
	if s.StartTime == nil {
		s.StartTime = ptr.To(w.startTime)
	}
	s.InitContainerStatuses = containerStatuses(w.initConts)
	s.ContainerStatuses = containerStatuses(w.containers)
	s.Phase = w.phaseLocked()
	s.ObservedGeneration = base.Generation

	setCondition(&s.Conditions, corev1.PodScheduled, true, "", "")
	setCondition(&s.Conditions, corev1.PodReadyToStartContainers, w.ip != "", "", "")
	if pending := notDone(w.initConts, func(c *container) bool {
		return c.sidecar && c.started || !c.sidecar && c.state.Terminated != nil && c.state.Terminated.ExitCode == 0
	}); w.initialized || w.finished && len(pending) == 0 {
		setCondition(&s.Conditions, corev1.PodInitialized, true, "", "")
	} else {
		setCondition(&s.Conditions, corev1.PodInitialized, false, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pending, " ")))
	}
	unready := notDone(w.containers, func(c *container) bool { return c.ready })
	unready = append(notDone(w.initConts, func(c *container) bool { return !c.sidecar || c.ready }), unready...)
	switch {
	case w.finished:
		setCondition(&s.Conditions, corev1.ContainersReady, false, "PodCompleted", "")
		setCondition(&s.Conditions, corev1.PodReady, false, "PodCompleted", "")
	case len(unready) > 0 || !w.initialized:
		msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
		setCondition(&s.Conditions, corev1.ContainersReady, false, "ContainersNotReady", msg)
		setCondition(&s.Conditions, corev1.PodReady, false, "ContainersNotReady", msg)
	default:
		setCondition(&s.Conditions, corev1.ContainersReady, true, "", "")
		if gates := unmetGates(base); len(gates) > 0 {
			setCondition(&s.Conditions, corev1.PodReady, false, "ReadinessGatesNotReady",
				fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True", gates[0]))
		} else {
			setCondition(&s.Conditions, corev1.PodReady, true, "", "")
		}
	}
	for i := range s.Conditions {
		switch s.Conditions[i].Type {
		case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady:
			s.Conditions[i].ObservedGeneration = base.Generation
		}
	}
	return s
}

// readyLocked says whether the pod is Ready, as its Services see it. Call
// with w.mu held.
func (w *podWorker) readyLocked(pod *corev1.Pod) bool {
	if w.finished || !w.initialized || pod.DeletionTimestamp != nil || len(unmetGates(pod)) > 0 {
		return false
	}
	return len(notDone(w.containers, func(c *container) bool { return c.ready }))+
		len(notDone(w.initConts, func(c *container) bool { return !c.sidecar || c.ready })) == 0
}

// phaseLocked is Pending until the containers run, then Running, and
// Succeeded or Failed once they are done for good.
func (w *podWorker) phaseLocked() corev1.PodPhase {
	if w.finished {
		for _, c := range w.containers {
			if c.state.Terminated == nil || c.state.Terminated.ExitCode != 0 {
				return corev1.PodFailed
			}
		}
		return corev1.PodSucceeded
	}
	if w.initialized {
		for _, c := range w.containers {
			if c.runs > 0 {
				return corev1.PodRunning
			}
		}
	}
	return corev1.PodPending
}

// notDone names the containers for which done is false.
func notDone(cs []*container, done func(*container) bool) []string {
	var names []string
	for _, c := range cs {
		if !done(c) {
			names = append(names, c.spec.Name)
		}
	}
	return names
}

// unmetGates are the pod's readiness gates whose condition is not True.
func unmetGates(pod *corev1.Pod) []corev1.PodConditionType {
	var unmet []corev1.PodConditionType
	for _, gate := range pod.Spec.ReadinessGates {
		met := false
		for _, c := range pod.Status.Conditions {
			met = met || c.Type == gate.ConditionType && c.Status == corev1.ConditionTrue
		}
		if !met {
			unmet = append(unmet, gate.ConditionType)
		}
	}
	return unmet
}

func containerStatuses(cs []*container) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(cs))
	for _, c := range cs {
		out = append(out, corev1.ContainerStatus{
			Name:                 c.spec.Name,
			State:                *c.state.DeepCopy(),
			LastTerminationState: *c.last.DeepCopy(),
			Ready:                c.ready,
			RestartCount:         c.restarts,
			Image:                c.spec.Image,
			ImageID:              c.imageID,
			ContainerID:          c.id,
			Started:              ptr.To(c.started),
		})
	}
	return out
}

// setCondition sets a condition, keeping its transition time when its
// status does not change.
func setCondition(conds *[]corev1.PodCondition, t corev1.PodConditionType, ok bool, reason, message string) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	c := corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: now()}
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != t {
			continue
		}
		if old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		c.LastProbeTime = old.LastProbeTime
		c.ObservedGeneration = old.ObservedGeneration
		*old = c
		return
	}
	*conds = append(*conds, c)
}
