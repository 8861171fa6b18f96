package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// Messages of the Scheduled condition.
const (
	MessageScheduled = "Binding has been scheduled successfully."
)

// specPatch is the merge patch of a schedule: spec.clusters and the
// applied-placement annotation, guarded by resourceVersion so a binding
// changed since it was read is not overwritten with a stale decision.
type specPatch struct {
	Metadata patchMeta     `json:"metadata"`
	Spec     specPatchBody `json:"spec"`
}

type patchMeta struct {
	ResourceVersion string            `json:"resourceVersion"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	// ManagedFields is always clearManagedFields.
	ManagedFields []struct{} `json:"managedFields"`
}

// clearManagedFields, a list of one empty entry, is how a write clears an
// object's managed fields. Nobody applies a binding, and once it has none
// the API server tracks no field of its later updates and status writes
// (until someone does apply it), which makes each of them about a third
// cheaper for the API server (README, "Propagation performance"): the
// schedule is the binding's first write after its creation.
var clearManagedFields = []struct{}{{}}

type specPatchBody struct {
	// Clusters has no omitempty: null removes the field.
	Clusters []workv1alpha2.TargetCluster `json:"clusters"`
}

// buildSpecPatch returns the patch, or nil when the binding already holds
// exactly this schedule.
func buildSpecPatch(b Binding, clusters []workv1alpha2.TargetCluster, placementJSON string) ([]byte, error) {
	sameClusters := equality.Semantic.DeepEqual(normalizeTargets(b.Spec.Clusters), normalizeTargets(clusters))
	sameAnnotation := b.Object.GetAnnotations()[policyv1alpha1.AppliedPlacementAnnotation] == placementJSON
	if sameClusters && sameAnnotation {
		return nil, nil
	}
	p := specPatch{
		Metadata: patchMeta{
			ResourceVersion: b.Object.GetResourceVersion(),
			Annotations:     map[string]string{policyv1alpha1.AppliedPlacementAnnotation: placementJSON},
			ManagedFields:   clearManagedFields,
		},
		Spec: specPatchBody{Clusters: clusters},
	}
	if len(clusters) == 0 {
		p.Spec.Clusters = nil
	}
	return json.Marshal(p)
}

// normalizeTargets sorts by name (the scheduler writes them sorted; others
// may not) and maps empty to nil, for comparison.
func normalizeTargets(t []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	if len(t) == 0 {
		return nil
	}
	if slices.IsSortedFunc(t, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) }) {
		return t
	}
	s := slices.Clone(t)
	slices.SortFunc(s, func(a, b workv1alpha2.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// statusFields are the status fields the scheduler owns.
type statusFields struct {
	observedGeneration int64
	affinityName       string
	lastScheduledTime  *metav1.Time
	conditions         []metav1.Condition
}

func currentStatus(s *workv1alpha2.ResourceBindingStatus) statusFields {
	return statusFields{
		observedGeneration: s.SchedulerObservedGeneration,
		affinityName:       s.SchedulerObservedAffinityName,
		lastScheduledTime:  s.LastScheduledTime,
		conditions:         s.Conditions,
	}
}

func (f statusFields) equal(o statusFields) bool {
	return f.observedGeneration == o.observedGeneration &&
		f.affinityName == o.affinityName &&
		equality.Semantic.DeepEqual(f.lastScheduledTime, o.lastScheduledTime) &&
		equality.Semantic.DeepEqual(f.conditions, o.conditions)
}

// withCondition returns a copy of conditions with the Scheduled condition
// set; LastTransitionTime only moves when the status does.
func withCondition(conditions []metav1.Condition, c metav1.Condition) []metav1.Condition {
	out := slices.Clone(conditions)
	meta.SetStatusCondition(&out, c)
	return out
}

// conditionFor maps a scheduling error to the Scheduled condition.
func conditionFor(err error, generation int64) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha2.Scheduled, ObservedGeneration: generation}
	var fit *framework.FitError
	var unsched *framework.UnschedulableError
	switch {
	case err == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, workv1alpha2.BindingReasonSuccess, MessageScheduled
		return c
	case errors.As(err, &fit):
		c.Reason = workv1alpha2.BindingReasonNoClusterFit
	case errors.As(err, &unsched):
		c.Reason = workv1alpha2.BindingReasonUnschedulable
	case federatedquota.IsExceeded(err):
		c.Reason = workv1alpha2.BindingReasonQuotaExceeded
	default:
		c.Reason = workv1alpha2.BindingReasonSchedulerError
	}
	c.Status = metav1.ConditionFalse
	c.Message = truncate(err.Error(), 32*1024)
	return c
}

// buildStatusPatch returns a merge patch of the scheduler's status fields
// guarded by resourceVersion, or nil when nothing changes.
func buildStatusPatch(old, next statusFields, resourceVersion string) ([]byte, error) {
	if old.equal(next) {
		return nil, nil
	}
	status := map[string]any{
		"schedulerObservedGeneration": next.observedGeneration,
		"conditions":                  next.conditions,
	}
	if next.affinityName != "" {
		status["schedulerObservingAffinityName"] = next.affinityName
	} else {
		status["schedulerObservingAffinityName"] = nil
	}
	if next.lastScheduledTime != nil {
		status["lastScheduledTime"] = next.lastScheduledTime
	}
	raw, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status":   status,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding status patch: %w", err)
	}
	return raw, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// describeTargets renders a schedule for events: "member1:2, member2:1".
func describeTargets(t []workv1alpha2.TargetCluster) string {
	if len(t) == 0 {
		return "no clusters"
	}
	var b strings.Builder
	for i, tc := range t {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tc.Name)
		if tc.Replicas > 0 {
			fmt.Fprintf(&b, ":%d", tc.Replicas)
		}
	}
	return b.String()
}
