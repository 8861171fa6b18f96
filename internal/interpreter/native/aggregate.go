package native

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Status aggregation folds the statuses reflected from the members into the
// template's status: counters are summed over clusters, load-balancer
// ingress points are merged, phases and conditions are combined so that
// the worst member state shows.
func aggregateRules() map[schema.GroupVersionKind]aggregateFunc {
	return map[schema.GroupVersionKind]aggregateFunc{
		deploymentGVK: aggregateWorkload("replicas", "readyReplicas", "updatedReplicas", "availableReplicas",
			"unavailableReplicas"),
		replicaSetGVK: aggregateWorkload("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
		statefulSetGVK: aggregateWorkload("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
			"availableReplicas"),
		daemonSetGVK: aggregateWorkload("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable",
			"numberMisscheduled", "numberReady", "updatedNumberScheduled", "numberUnavailable"),
		jobGVK:     aggregateJob,
		cronJobGVK: aggregateCronJob,
		podGVK:     aggregatePod,
		serviceGVK: aggregateService,
		ingressGVK: aggregateIngress,
		pvcGVK:     aggregatePersistentVolumeClaim,
		pvGVK:      aggregatePersistentVolume,
		pdbGVK:     aggregatePodDisruptionBudget,
		hpaV2GVK:   aggregateHorizontalPodAutoscaler,
		hpaV1GVK:   aggregateHorizontalPodAutoscaler,
	}
}

// decodeItem decodes one member's status; false when it has none yet.
func decodeItem(item *workv1alpha2.AggregatedStatusItem, into any) (bool, error) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(item.Status.Raw, into); err != nil {
		return false, fmt.Errorf("status from cluster %s: %w", item.ClusterName, err)
	}
	return true, nil
}

// setStatus replaces obj's status with a typed status.
func setStatus(obj *unstructured.Unstructured, status any) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return fmt.Errorf("encoding status: %w", err)
	}
	obj.Object["status"] = u
	return nil
}

// workloadStatus holds the counters of every workload kind plus the
// generations reflected with them.
type workloadStatus struct {
	Replicas                   int64 `json:"replicas"`
	ReadyReplicas              int64 `json:"readyReplicas"`
	UpdatedReplicas            int64 `json:"updatedReplicas"`
	AvailableReplicas          int64 `json:"availableReplicas"`
	UnavailableReplicas        int64 `json:"unavailableReplicas"`
	FullyLabeledReplicas       int64 `json:"fullyLabeledReplicas"`
	CurrentReplicas            int64 `json:"currentReplicas"`
	CurrentNumberScheduled     int64 `json:"currentNumberScheduled"`
	DesiredNumberScheduled     int64 `json:"desiredNumberScheduled"`
	NumberAvailable            int64 `json:"numberAvailable"`
	NumberMisscheduled         int64 `json:"numberMisscheduled"`
	NumberReady                int64 `json:"numberReady"`
	UpdatedNumberScheduled     int64 `json:"updatedNumberScheduled"`
	NumberUnavailable          int64 `json:"numberUnavailable"`
	ObservedGeneration         int64 `json:"observedGeneration"`
	Generation                 int64 `json:"generation"`
	ResourceTemplateGeneration int64 `json:"resourceTemplateGeneration"`
}

func (s *workloadStatus) counterField(name string) *int64 {
	switch name {
	case "replicas":
		return &s.Replicas
	case "readyReplicas":
		return &s.ReadyReplicas
	case "updatedReplicas":
		return &s.UpdatedReplicas
	case "availableReplicas":
		return &s.AvailableReplicas
	case "unavailableReplicas":
		return &s.UnavailableReplicas
	case "fullyLabeledReplicas":
		return &s.FullyLabeledReplicas
	case "currentReplicas":
		return &s.CurrentReplicas
	case "currentNumberScheduled":
		return &s.CurrentNumberScheduled
	case "desiredNumberScheduled":
		return &s.DesiredNumberScheduled
	case "numberAvailable":
		return &s.NumberAvailable
	case "numberMisscheduled":
		return &s.NumberMisscheduled
	case "numberReady":
		return &s.NumberReady
	case "updatedNumberScheduled":
		return &s.UpdatedNumberScheduled
	case "numberUnavailable":
		return &s.NumberUnavailable
	}
	return nil
}

func (s *workloadStatus) counter(name string) int64 {
	if p := s.counterField(name); p != nil {
		return *p
	}
	return 0
}

// decodeWorkload reads a member's workload status with the fast scanner,
// falling back to encoding/json for what it does not take (and its errors).
func decodeWorkload(item *workv1alpha2.AggregatedStatusItem, s *workloadStatus) (bool, error) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return false, nil
	}
	err := scanInts(item.Status.Raw, func(key []byte, n int64, isInt bool) bool {
		p := s.field(key)
		if p == nil {
			return true
		}
		*p = n
		return isInt
	})
	if err == nil {
		return true, nil
	}
	*s = workloadStatus{}
	return decodeItem(item, s)
}

// field returns the counter or generation named key, nil for others.
func (s *workloadStatus) field(key []byte) *int64 {
	switch string(key) {
	case "observedGeneration":
		return &s.ObservedGeneration
	case "generation":
		return &s.Generation
	case "resourceTemplateGeneration":
		return &s.ResourceTemplateGeneration
	}
	return s.counterField(string(key))
}

// caughtUp tells whether a member has observed its own latest generation,
// rendered from the template's generation. A member object without the
// template-generation annotation is judged by its own generation only.
func (s *workloadStatus) caughtUp(templateGeneration int64) bool {
	if s.ObservedGeneration != s.Generation {
		return false
	}
	return s.ResourceTemplateGeneration == 0 || s.ResourceTemplateGeneration == templateGeneration
}

// aggregateWorkload sums the named counters over the members. The other
// fields of the template's status stay. observedGeneration becomes the
// template's generation once every member has caught up with it, and
// otherwise keeps its value, so that tools such as Argo CD see a rollout
// as done only when it is done everywhere.
func aggregateWorkload(counters ...string) aggregateFunc {
	return func(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
		old, err := nestedMap(obj.Object, "status")
		if err != nil {
			return err
		}
		sums := make([]int64, len(counters))
		caughtUp := true
		generation := obj.GetGeneration()
		for i := range items {
			var s workloadStatus
			ok, err := decodeWorkload(&items[i], &s)
			if err != nil {
				return err
			}
			if !ok {
				caughtUp = false
				continue
			}
			for j, c := range counters {
				sums[j] += s.counter(c)
			}
			caughtUp = caughtUp && s.caughtUp(generation)
		}
		status := make(map[string]any, len(old)+len(counters)+1)
		for k, v := range old {
			status[k] = v
		}
		for j, c := range counters {
			status[c] = sums[j]
		}
		if caughtUp {
			status["observedGeneration"] = generation
		}
		obj.Object["status"] = status
		return nil
	}
}

// aggregateJob sums the pod counts and combines the members' outcomes: the
// Job failed when it failed in any member and is complete when it completed
// in all. It started when the first member started it and completed when
// the last member completed it. A Job already finished is left as it is.
func aggregateJob(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	var current batchv1.JobStatus
	if st, err := nestedMap(obj.Object, "status"); err != nil {
		return err
	} else if st != nil {
		if err := fromUnstructured(st, &current, "status"); err != nil {
			return err
		}
	}
	if jobFinished(&current) != "" {
		return nil
	}
	var out batchv1.JobStatus
	var failedIn []string
	var failedAt, completedAt *metav1.Time
	completed, withCompletionTime := 0, 0
	for i := range items {
		var s batchv1.JobStatus
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		out.Active += s.Active
		out.Succeeded += s.Succeeded
		out.Failed += s.Failed
		if s.Ready != nil {
			out.Ready = ptrSum(out.Ready, *s.Ready)
		}
		switch c := jobFinishedCondition(&s); {
		case c == nil:
		case c.Type == batchv1.JobFailed:
			failedIn = append(failedIn, items[i].ClusterName)
			failedAt = laterTime(failedAt, &c.LastTransitionTime)
		case c.Type == batchv1.JobComplete:
			completed++
			completedAt = laterTime(completedAt, &c.LastTransitionTime)
		}
		if s.StartTime != nil && (out.StartTime == nil || s.StartTime.Before(out.StartTime)) {
			out.StartTime = s.StartTime.DeepCopy()
		}
		if s.CompletionTime != nil {
			withCompletionTime++
			out.CompletionTime = laterTime(out.CompletionTime, s.CompletionTime)
		}
	}
	// The API server accepts a finished Job only as the Job controller
	// writes one: Failed after FailureTarget, Complete after
	// SuccessCriteriaMet with a completionTime, a startTime, and no pods
	// counted active or ready.
	switch {
	case len(failedIn) > 0:
		out.Conditions = append(out.Conditions, jobCondition(batchv1.JobFailureTarget, *failedAt, "JobFailed",
			fmt.Sprintf("Job failed in member clusters %s", strings.Join(failedIn, ","))))
		out.Conditions = append(out.Conditions, jobCondition(batchv1.JobFailed, *failedAt, "JobFailed",
			fmt.Sprintf("Job executed failed in member clusters %s", strings.Join(failedIn, ","))))
		out.CompletionTime = nil
		finishJobStatus(&out, failedAt)
	case completed > 0 && completed == len(items):
		out.Conditions = append(out.Conditions, jobCondition(batchv1.JobSuccessCriteriaMet, *completedAt, "CompletionsReached",
			"Reached expected number of succeeded pods in every member cluster"))
		out.Conditions = append(out.Conditions, jobCondition(batchv1.JobComplete, *completedAt, "Completed", "Job completed"))
		if withCompletionTime != len(items) || out.CompletionTime == nil {
			out.CompletionTime = completedAt.DeepCopy()
		}
		finishJobStatus(&out, completedAt)
	default:
		// The API server refuses a completionTime without Complete.
		out.CompletionTime = nil
	}
	return setStatus(obj, &out)
}

func jobCondition(t batchv1.JobConditionType, at metav1.Time, reason, message string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: at, LastTransitionTime: at, Reason: reason, Message: message}
}

// finishJobStatus clears what a finished Job may not have and makes sure it
// has a startTime no later than it finished.
func finishJobStatus(s *batchv1.JobStatus, finishedAt *metav1.Time) {
	s.Active = 0
	if s.Ready != nil {
		s.Ready = new(int32)
	}
	if s.Terminating != nil {
		s.Terminating = new(int32)
	}
	if s.StartTime == nil || finishedAt.Before(s.StartTime) {
		s.StartTime = finishedAt.DeepCopy()
	}
}

func ptrSum(p *int32, n int32) *int32 {
	v := n
	if p != nil {
		v += *p
	}
	return &v
}

func laterTime(a, b *metav1.Time) *metav1.Time {
	if b == nil {
		return a
	}
	if a == nil || a.Before(b) {
		return b.DeepCopy()
	}
	return a
}

// jobFinishedCondition returns the Complete or Failed condition that is
// true, if any.
func jobFinishedCondition(s *batchv1.JobStatus) *batchv1.JobCondition {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobFinished(s *batchv1.JobStatus) batchv1.JobConditionType {
	if c := jobFinishedCondition(s); c != nil {
		return c.Type
	}
	return ""
}

// aggregateCronJob lists the active Jobs of every member and keeps the
// latest schedule and success times.
func aggregateCronJob(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	var out batchv1.CronJobStatus
	for i := range items {
		var s batchv1.CronJobStatus
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		out.Active = append(out.Active, s.Active...)
		out.LastScheduleTime = laterTime(out.LastScheduleTime, s.LastScheduleTime)
		out.LastSuccessfulTime = laterTime(out.LastSuccessfulTime, s.LastSuccessfulTime)
	}
	return setStatus(obj, &out)
}

// aggregatePod combines phases, worst first (Failed, Pending, Running,
// Succeeded), and lists every member's container readiness and state. A
// member without status yet counts as Pending.
func aggregatePod(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	if len(items) == 0 {
		return nil
	}
	out := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{}}
	phases := map[corev1.PodPhase]bool{}
	for i := range items {
		var s corev1.PodStatus
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			phases[corev1.PodPending] = true
			continue
		}
		phases[s.Phase] = true
		for _, c := range s.ContainerStatuses {
			out.ContainerStatuses = append(out.ContainerStatuses, corev1.ContainerStatus{Ready: c.Ready, State: c.State})
		}
		for _, c := range s.InitContainerStatuses {
			out.InitContainerStatuses = append(out.InitContainerStatuses, corev1.ContainerStatus{Ready: c.Ready, State: c.State})
		}
	}
	for _, p := range []corev1.PodPhase{corev1.PodFailed, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded} {
		if phases[p] {
			out.Phase = p
			break
		}
	}
	return setStatus(obj, &out)
}

// loadBalancerIngress merges the members' load-balancer ingress points as
// Karmada does: appended, de-duplicated and sorted (by ip, then hostname),
// each as its member wrote it. (Older Karmada releases set the cluster's name
// as the hostname of a point without one; clients now compare the list with
// what the members report.)
func loadBalancerIngress(items []workv1alpha2.AggregatedStatusItem) ([]any, error) {
	type point struct {
		ip, hostname, key string
		value             any
	}
	var points []point
	seen := map[string]bool{}
	for i := range items {
		var s struct {
			LoadBalancer struct {
				Ingress []map[string]any `json:"ingress"`
			} `json:"loadBalancer"`
		}
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, ing := range s.LoadBalancer.Ingress {
			// encoding/json writes map keys sorted: equal points encode
			// equally.
			key, err := json.Marshal(ing)
			if err != nil {
				return nil, err
			}
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			ip, _ := ing["ip"].(string)
			hostname, _ := ing["hostname"].(string)
			points = append(points, point{ip: ip, hostname: hostname, key: string(key), value: numbersToInt(ing)})
		}
	}
	slices.SortFunc(points, func(a, b point) int {
		return cmp.Or(strings.Compare(a.ip, b.ip), strings.Compare(a.hostname, b.hostname), strings.Compare(a.key, b.key))
	})
	out := make([]any, len(points))
	for i, p := range points {
		out[i] = p.value
	}
	return out, nil
}

func setLoadBalancerIngress(obj *unstructured.Unstructured, ingress []any) {
	lb := map[string]any{}
	if len(ingress) > 0 {
		lb["ingress"] = ingress
	}
	obj.Object["status"] = map[string]any{"loadBalancer": lb}
}

// aggregateService merges load-balancer ingress for LoadBalancer Services;
// other Services have no status to aggregate.
func aggregateService(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	t, err := nestedString(obj.Object, "spec", "type")
	if err != nil || t != string(corev1.ServiceTypeLoadBalancer) {
		return err
	}
	ingress, err := loadBalancerIngress(items)
	if err != nil {
		return err
	}
	setLoadBalancerIngress(obj, ingress)
	return nil
}

func aggregateIngress(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	ingress, err := loadBalancerIngress(items)
	if err != nil {
		return err
	}
	setLoadBalancerIngress(obj, ingress)
	return nil
}

// aggregatePersistentVolumeClaim is Bound when bound everywhere, Lost when
// lost anywhere, and otherwise the phase of a member that is not bound.
func aggregatePersistentVolumeClaim(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	phase := corev1.ClaimBound
	for i := range items {
		var s corev1.PersistentVolumeClaimStatus
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if s.Phase == corev1.ClaimLost {
			phase = corev1.ClaimLost
			break
		}
		if s.Phase != corev1.ClaimBound {
			phase = s.Phase
		}
	}
	return setStatus(obj, &corev1.PersistentVolumeClaimStatus{Phase: phase})
}

// aggregatePersistentVolume takes the worst phase: Failed, Pending,
// Available, Bound, Released. A member without status counts as Pending.
func aggregatePersistentVolume(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	phases := map[corev1.PersistentVolumePhase]bool{}
	for i := range items {
		var s corev1.PersistentVolumeStatus
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			phases[corev1.VolumePending] = true
			continue
		}
		phases[s.Phase] = true
	}
	var out corev1.PersistentVolumeStatus
	for _, p := range []corev1.PersistentVolumePhase{corev1.VolumeFailed, corev1.VolumePending,
		corev1.VolumeAvailable, corev1.VolumeBound, corev1.VolumeReleased} {
		if phases[p] {
			out.Phase = p
			break
		}
	}
	return setStatus(obj, &out)
}

// aggregatePodDisruptionBudget sums the counts; disrupted pods are keyed
// "cluster/pod".
func aggregatePodDisruptionBudget(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	out := map[string]any{}
	var healthy, desired, expected, allowed int64
	disrupted := map[string]any{}
	for i := range items {
		var s struct {
			CurrentHealthy     int64             `json:"currentHealthy"`
			DesiredHealthy     int64             `json:"desiredHealthy"`
			ExpectedPods       int64             `json:"expectedPods"`
			DisruptionsAllowed int64             `json:"disruptionsAllowed"`
			DisruptedPods      map[string]string `json:"disruptedPods"`
		}
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		healthy += s.CurrentHealthy
		desired += s.DesiredHealthy
		expected += s.ExpectedPods
		allowed += s.DisruptionsAllowed
		for pod, t := range s.DisruptedPods {
			disrupted[items[i].ClusterName+"/"+pod] = t
		}
	}
	out["currentHealthy"], out["desiredHealthy"] = healthy, desired
	out["expectedPods"], out["disruptionsAllowed"] = expected, allowed
	if len(disrupted) > 0 {
		out["disruptedPods"] = disrupted
	}
	if old, err := nestedMap(obj.Object, "status"); err != nil {
		return err
	} else if old != nil && old["conditions"] != nil {
		out["conditions"] = old["conditions"]
	}
	obj.Object["status"] = out
	return nil
}

// aggregateHorizontalPodAutoscaler sums current and desired replicas and
// keeps the latest scale time; the rest of the status stays.
func aggregateHorizontalPodAutoscaler(obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) error {
	var current, desired int64
	var last *metav1.Time
	for i := range items {
		var s struct {
			CurrentReplicas int64        `json:"currentReplicas"`
			DesiredReplicas int64        `json:"desiredReplicas"`
			LastScaleTime   *metav1.Time `json:"lastScaleTime"`
		}
		ok, err := decodeItem(&items[i], &s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		current += s.CurrentReplicas
		desired += s.DesiredReplicas
		last = laterTime(last, s.LastScaleTime)
	}
	old, err := nestedMap(obj.Object, "status")
	if err != nil {
		return err
	}
	status := make(map[string]any, len(old)+3)
	for k, v := range old {
		status[k] = v
	}
	status["currentReplicas"], status["desiredReplicas"] = current, desired
	if last != nil {
		status["lastScaleTime"] = last.UTC().Format("2006-01-02T15:04:05Z")
	}
	obj.Object["status"] = status
	return nil
}

// numbersToInt turns the float64 numbers encoding/json produced into int64
// where whole, as unstructured objects hold them.
func numbersToInt(v any) any {
	switch x := v.(type) {
	case float64:
		if n, ok := toInt64(x); ok {
			return n
		}
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToInt(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToInt(e)
		}
	}
	return v
}
