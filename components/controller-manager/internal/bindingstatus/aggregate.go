package bindingstatus

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
	"github.com/flotilla-io/flotilla/internal/manifeststatus"
	"github.com/flotilla-io/flotilla/internal/workcache"
)

// Reasons and messages of the FullyApplied condition, as Karmada's.
const (
	ReasonFullyAppliedSuccess = "FullyAppliedSuccess"
	ReasonFullyAppliedFailed  = "FullyAppliedFailed"

	MessageFullyAppliedSuccess = "All works have been successfully applied"
)

// Applied messages of clusters whose Work says nothing yet.
const (
	messageNoWork       = "Work not created yet"
	messageWorkDeleting = "Work is being deleted"
	messageNotApplied   = "Work not applied yet"
)

// itemFor is the aggregated status of the template in one cluster, from
// that cluster's Work (nil when there is none). As in Karmada, a cluster
// whose Work is not applied reports why and Unknown health, without
// status; an applied one reports the reflected status and health of the
// template's manifest.
func itemFor(cluster string, work *workv1alpha1.Work, ref workv1alpha2.ObjectReference) (workv1alpha2.AggregatedStatusItem, error) {
	item := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: workv1alpha2.ResourceUnknown}
	switch {
	case work == nil:
		item.AppliedMessage = messageNoWork
		return item, nil
	case !work.DeletionTimestamp.IsZero():
		item.AppliedMessage = messageWorkDeleting
		return item, nil
	}
	cond := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	switch {
	case cond == nil:
		item.AppliedMessage = messageNotApplied
		return item, nil
	case cond.Status != metav1.ConditionTrue:
		item.AppliedMessage = cond.Message
		if item.AppliedMessage == "" {
			item.AppliedMessage = cond.Reason
		}
		return item, nil
	}
	item.Applied = true
	if ms := manifestStatusOf(work, ref); ms != nil {
		raw, err := workcache.StatusJSON(ms)
		if err != nil {
			return item, err
		}
		if raw != nil {
			item.Status = &runtime.RawExtension{Raw: raw}
		}
		if ms.Health != "" {
			item.Health = workv1alpha2.ResourceHealth(ms.Health)
		}
	}
	return item, nil
}

// manifestStatusOf finds the status of the template's manifest in a Work:
// the one whose identifier names the template, else the status of the
// first manifest of a single-manifest Work.
func manifestStatusOf(work *workv1alpha1.Work, ref workv1alpha2.ObjectReference) *workv1alpha1.ManifestStatus {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	for i := range work.Status.ManifestStatuses {
		id := work.Status.ManifestStatuses[i].Identifier
		if id.Group == gv.Group && id.Kind == ref.Kind && id.Namespace == ref.Namespace && id.Name == ref.Name {
			return &work.Status.ManifestStatuses[i]
		}
	}
	if len(work.Spec.Workload.Manifests) == 1 {
		for i := range work.Status.ManifestStatuses {
			if work.Status.ManifestStatuses[i].Identifier.Ordinal == 0 {
				return &work.Status.ManifestStatuses[i]
			}
		}
	}
	return nil
}

// settling reports whether a binding that has never been aggregated is
// still on its first way out: not scheduled yet, or with Works not yet
// created or not yet reported, and nothing failed, for at most
// grace after its creation. Its first status then says where it landed
// instead of passing through each step on the way, one write each.
func settling(v binding.View, items []workv1alpha2.AggregatedStatusItem, now time.Time, grace time.Duration) bool {
	if len(v.Status.AggregatedStatus) > 0 || meta.FindStatusCondition(v.Status.Conditions, workv1alpha2.FullyApplied) != nil {
		return false
	}
	if now.Sub(v.Object.GetCreationTimestamp().Time) >= grace {
		return false
	}
	inProgress := len(items) == 0
	for _, it := range items {
		switch {
		case it.Applied:
		case it.AppliedMessage == messageNoWork || it.AppliedMessage == messageNotApplied:
			inProgress = true
		default:
			return false // a failure is reported at once
		}
	}
	return inProgress
}

// fullyApplied is the FullyApplied condition for items, one per cluster
// where the binding should be: True when every one is applied. A binding
// with no cluster is not applied anywhere.
func fullyApplied(items []workv1alpha2.AggregatedStatusItem, generation int64) metav1.Condition {
	cond := metav1.Condition{
		Type:               workv1alpha2.FullyApplied,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonFullyAppliedSuccess,
		Message:            MessageFullyAppliedSuccess,
		ObservedGeneration: generation,
	}
	if len(items) == 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonFullyAppliedFailed, "Not scheduled to any cluster"
		return cond
	}
	var failed []string
	for _, it := range items {
		if it.Applied {
			continue
		}
		msg := it.ClusterName
		if it.AppliedMessage != "" {
			msg += " (" + it.AppliedMessage + ")"
		}
		failed = append(failed, msg)
	}
	if len(failed) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonFullyAppliedFailed
		cond.Message = fmt.Sprintf("Not applied in %d of %d clusters: %s", len(failed), len(items), strings.Join(failed, "; "))
	}
	return cond
}

// sameItems compares aggregated statuses, the reflected statuses as JSON
// values (the API server may re-encode them).
func sameItems(a, b []workv1alpha2.AggregatedStatusItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ClusterName != y.ClusterName || x.Applied != y.Applied || x.AppliedMessage != y.AppliedMessage || x.Health != y.Health {
			return false
		}
		if !manifeststatus.SameRaw(x.Status, y.Status) {
			return false
		}
	}
	return true
}
