package federatedhpa

// The calculation is Kubernetes' HorizontalPodAutoscaler's, written here
// rather than imported from k8s.io/kubernetes/pkg/controller/podautoscaler:
// its ReplicaCalculator takes the tolerance as a Tolerances whose fields
// are unexported and that has no constructor, so only a zero tolerance can
// be passed from outside; it reads pods from one lister and keys samples by
// pod name, where the federation has pods of the same name in several
// members; and the behavior (windows, policies) is unexported methods of
// its controller. Importing it would also take replace directives for
// every staging module and register all of Kubernetes' feature gates at
// init. The table tests pin the HPA's documented behavior instead.

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PodKey names a pod of the federation: the member it runs in and its name.
type PodKey struct {
	Cluster string
	Name    string
}

func (k PodKey) String() string { return k.Cluster + "/" + k.Name }

// PodMetric is one sample of one pod, in thousandths of the metric's unit.
type PodMetric struct {
	Value     int64
	Timestamp time.Time
	Window    time.Duration
}

// PodMetrics are samples by pod. A sample whose member is not known (the
// custom metrics API does not say) has an empty Cluster and stands for the
// pod of that name in whichever member.
type PodMetrics map[PodKey]PodMetric

// MemberPod is a pod as read from the member it runs in.
type MemberPod struct {
	Cluster string
	Pod     *corev1.Pod
}

func (p MemberPod) key() PodKey { return PodKey{Cluster: p.Cluster, Name: p.Pod.Name} }

// Tolerances are how far the ratio of current to target may stray below
// (Down) or above (Up) 1 before the replica count changes.
type Tolerances struct {
	Down float64
	Up   float64
}

func (t Tolerances) within(ratio float64) bool {
	return 1-t.Down <= ratio && ratio <= 1+t.Up
}

// Calculator turns metrics into replica counts as Kubernetes'
// HorizontalPodAutoscaler does, over the pods of every member. Calibration
// is Karmada's: the replicas the members that answered hold, over the
// template's; a count computed from their pods is divided by it, so that
// members that could not be read do not shrink the workload.
type Calculator struct {
	// CPUInitializationPeriod: a CPU sample of a pod younger than this is
	// used only if the pod is ready and the sample was taken after it
	// became so.
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay: a pod not ready whose readiness last changed
	// within this delay of its start is taken as never ready yet.
	InitialReadinessDelay time.Duration
	// Now is the time of the calculation.
	Now time.Time
}

// podGroups sorts pods as the HPA does: ready ones with a sample counted,
// unready ones (pending, or for CPU still starting), ones with no sample
// (missing) and ones going away (ignored).
type podGroups struct {
	ready   int
	unready map[PodKey]bool
	missing map[PodKey]bool
	ignored map[PodKey]bool
}

// match keys the samples by the pods they belong to: a sample of a known
// member goes to that member's pod, one of unknown member to the pod of its
// name. Samples of no pod in pods are dropped.
func match(pods []MemberPod, metrics PodMetrics) PodMetrics {
	out := make(PodMetrics, len(pods))
	for _, p := range pods {
		k := p.key()
		if m, ok := metrics[k]; ok {
			out[k] = m
		} else if m, ok := metrics[PodKey{Name: k.Name}]; ok {
			out[k] = m
		}
	}
	return out
}

func (c Calculator) group(pods []MemberPod, metrics PodMetrics, resource corev1.ResourceName) podGroups {
	g := podGroups{unready: map[PodKey]bool{}, missing: map[PodKey]bool{}, ignored: map[PodKey]bool{}}
	for _, p := range pods {
		k, pod := p.key(), p.Pod
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			g.ignored[k] = true
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			g.unready[k] = true
			continue
		}
		m, ok := metrics[k]
		if !ok {
			g.missing[k] = true
			continue
		}
		if resource == corev1.ResourceCPU && c.cpuUnready(pod, m) {
			g.unready[k] = true
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready: CPU use while a pod starts is not what it will use once
// serving, so such samples are left out.
func (c Calculator) cpuUnready(pod *corev1.Pod, m PodMetric) bool {
	var ready *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			ready = &pod.Status.Conditions[i]
		}
	}
	if ready == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(c.CPUInitializationPeriod).After(c.Now) {
		// Still initialising: only a ready pod's sample taken a whole
		// window after it became ready counts.
		return ready.Status == corev1.ConditionFalse || m.Timestamp.Before(ready.LastTransitionTime.Add(m.Window))
	}
	// Initialised: unready only if it has never been ready.
	return ready.Status == corev1.ConditionFalse && start.Add(c.InitialReadinessDelay).After(ready.LastTransitionTime.Time)
}

func without(metrics PodMetrics, keys map[PodKey]bool) {
	for k := range keys {
		delete(metrics, k)
	}
}

// requests are the pods' requests of resource: the container's when
// container is named, else the pod-level request when the pod sets one,
// else the sum over its containers and sidecars (restartable init
// containers). A container without a request is an error: utilization has
// no meaning then.
func requests(pods []MemberPod, container string, resource corev1.ResourceName) (map[PodKey]int64, error) {
	out := make(map[PodKey]int64, len(pods))
	for _, p := range pods {
		pod := p.Pod
		if container == "" && pod.Spec.Resources != nil {
			if q, ok := pod.Spec.Resources.Requests[resource]; ok {
				out[p.key()] = q.MilliValue()
				continue
			}
		}
		var sum int64
		found := false
		add := func(c corev1.Container) error {
			if container != "" && c.Name != container {
				return nil
			}
			found = true
			q, ok := c.Resources.Requests[resource]
			if !ok {
				return fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, p.key())
			}
			sum += q.MilliValue()
			return nil
		}
		for _, c := range pod.Spec.Containers {
			if err := add(c); err != nil {
				return nil, err
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				if err := add(c); err != nil {
					return nil, err
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("container %s not present in Pod %s", container, p.key())
		}
		out[p.key()] = sum
	}
	return out, nil
}

// utilizationRatio is the samples' total over the requests' total, as a
// percentage, over target; and the average sample.
func utilizationRatio(metrics PodMetrics, reqs map[PodKey]int64, target int32) (ratio float64, utilization int32, average int64, err error) {
	var used, requested int64
	n := 0
	for k, m := range metrics {
		r, ok := reqs[k]
		if !ok {
			continue
		}
		used += m.Value
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization = int32(used * 100 / requested)
	return float64(utilization) / float64(target), utilization, used / int64(n), nil
}

// usageRatio is the average sample over target.
func usageRatio(metrics PodMetrics, target int64) (ratio float64, average int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	average = total / int64(len(metrics))
	return float64(average) / float64(target), average
}

func ceilReplicas(f float64) int32 {
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(math.Ceil(f))
}

// ResourceUtilization is the replica count that brings the average
// utilization of resource (percent of the request) to target. It returns
// the current utilization and the average raw use too.
func (c Calculator) ResourceUtilization(pods []MemberPod, raw PodMetrics, resource corev1.ResourceName, container string,
	target int32, current int32, calibration float64, tol Tolerances) (replicas int32, utilization int32, average int64, err error) {
	if len(pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	metrics := match(pods, raw)
	g := c.group(pods, metrics, resource)
	without(metrics, g.ignored)
	without(metrics, g.unready)
	if len(metrics) == 0 {
		return 0, 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	reqs, err := requests(pods, container, resource)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, utilization, average, err := utilizationRatio(metrics, reqs, target)
	if err != nil {
		return 0, 0, 0, err
	}
	upWithUnready := len(g.unready) > 0 && ratio > 1
	if !upWithUnready && len(g.missing) == 0 {
		if tol.within(ratio) {
			return current, utilization, average, nil
		}
		return ceilReplicas(ratio * float64(g.ready) / calibration), utilization, average, nil
	}
	// Assume the worst for the direction of the change: pods without a
	// sample use their whole request (or the target, if higher) when
	// scaling down and nothing when scaling up; unready pods nothing.
	for k := range g.missing {
		switch {
		case ratio < 1:
			metrics[k] = PodMetric{Value: reqs[k] * int64(max(100, target)) / 100}
		case ratio > 1:
			metrics[k] = PodMetric{}
		}
	}
	if upWithUnready {
		for k := range g.unready {
			metrics[k] = PodMetric{}
		}
	}
	newRatio, _, _, err := utilizationRatio(metrics, reqs, target)
	if err != nil {
		return 0, utilization, average, err
	}
	return settle(current, ratio, newRatio, len(metrics), calibration, tol), utilization, average, nil
}

// settle is the count after the assumptions about missing and unready pods:
// no change when within tolerance or when they reverse the direction.
func settle(current int32, ratio, newRatio float64, n int, calibration float64, tol Tolerances) int32 {
	if tol.within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return current
	}
	replicas := ceilReplicas(newRatio * float64(n) / calibration)
	if (newRatio < 1 && replicas > current) || (newRatio > 1 && replicas < current) {
		return current
	}
	return replicas
}

// AverageValue is the replica count that brings the average sample per
// pod to target: a resource's raw use (resource set; CPU samples of
// starting pods are then left out) or a pods metric (resource empty).
func (c Calculator) AverageValue(pods []MemberPod, raw PodMetrics, resource corev1.ResourceName,
	target int64, current int32, calibration float64, tol Tolerances) (replicas int32, average int64, err error) {
	if len(pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	metrics := match(pods, raw)
	g := c.group(pods, metrics, resource)
	without(metrics, g.ignored)
	without(metrics, g.unready)
	if len(metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, average := usageRatio(metrics, target)
	upWithUnready := len(g.unready) > 0 && ratio > 1
	if !upWithUnready && len(g.missing) == 0 {
		if tol.within(ratio) {
			return current, average, nil
		}
		return ceilReplicas(ratio * float64(g.ready) / calibration), average, nil
	}
	for k := range g.missing {
		switch {
		case ratio < 1:
			metrics[k] = PodMetric{Value: target}
		case ratio > 1:
			metrics[k] = PodMetric{}
		}
	}
	if upWithUnready {
		for k := range g.unready {
			metrics[k] = PodMetric{}
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	return settle(current, ratio, newRatio, len(metrics), calibration, tol), average, nil
}

// readyPods counts the running, ready pods.
func readyPods(pods []MemberPod) int {
	n := 0
	for _, p := range pods {
		if p.Pod.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// Ratio is the replica count for a metric that is not per pod (an object's
// or an external value): the ready pods scaled by how far the value is from
// target.
func (c Calculator) Ratio(pods []MemberPod, ratio float64, current int32, calibration float64, tol Tolerances) (int32, error) {
	if current == 0 {
		return ceilReplicas(ratio), nil
	}
	if tol.within(ratio) {
		return current, nil
	}
	if len(pods) == 0 {
		return 0, errors.New("unable to calculate ready pods: no pods returned by selector while calculating replica count")
	}
	return ceilReplicas(ratio * float64(readyPods(pods)) / calibration), nil
}

// PerPod is the replica count for a total (an object's or an external
// value) to be target per replica, and the current value per replica.
func PerPod(statusReplicas int32, total, target int64, tol Tolerances) (replicas int32, perReplica int64) {
	replicas = statusReplicas
	if !tol.within(float64(total) / (float64(target) * float64(statusReplicas))) {
		replicas = ceilReplicas(float64(total) / float64(target))
	}
	if statusReplicas == 0 {
		return replicas, total
	}
	return replicas, int64(math.Ceil(float64(total) / float64(statusReplicas)))
}
