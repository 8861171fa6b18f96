package execution

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestDecide(t *testing.T) {
	const (
		abort     = workv1alpha1.ConflictResolutionAbort
		overwrite = workv1alpha1.ConflictResolutionOverwrite
	)
	tests := []struct {
		name       string
		obs        observation
		resolution string
		want       action
	}{
		{"absent: create", observation{}, abort, actionApply},
		{"absent with overwrite: create", observation{}, overwrite, actionApply},
		{"ours and in sync: nothing", observation{exists: true, managed: true, inSync: true}, abort, actionNone},
		{"ours and changed: apply", observation{exists: true, managed: true}, abort, actionApply},
		{"unmanaged with abort: conflict", observation{exists: true}, abort, actionConflict},
		{"unmanaged with overwrite: adopt", observation{exists: true}, overwrite, actionApply},
		{"unknown resolution means abort", observation{exists: true}, "merge", actionConflict},
		{"terminating ours: wait", observation{exists: true, managed: true, terminating: true}, abort, actionWait},
		{"terminating unmanaged: wait", observation{exists: true, terminating: true}, overwrite, actionWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(tt.obs, tt.resolution); got != tt.want {
				t.Errorf("decide(%+v, %q) = %v, want %v", tt.obs, tt.resolution, got, tt.want)
			}
		})
	}
}

func TestConflictResolutionAnnotation(t *testing.T) {
	for value, want := range map[string]string{
		"overwrite": workv1alpha1.ConflictResolutionOverwrite,
		"Overwrite": workv1alpha1.ConflictResolutionOverwrite,
		"abort":     workv1alpha1.ConflictResolutionAbort,
		"":          workv1alpha1.ConflictResolutionAbort,
		"yes":       workv1alpha1.ConflictResolutionAbort,
	} {
		obj := &unstructured.Unstructured{}
		if value != "" {
			obj.SetAnnotations(map[string]string{workv1alpha1.ConflictResolutionAnnotation: value})
		}
		if got := ConflictResolution(obj); got != want {
			t.Errorf("ConflictResolution(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestManagedBy(t *testing.T) {
	work := testWork(t)
	member := func(labels, annotations map[string]string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetLabels(labels)
		o.SetAnnotations(annotations)
		return o
	}
	ours := map[string]string{workv1alpha1.WorkNamespaceAnnotation: work.Namespace, workv1alpha1.WorkNameAnnotation: work.Name}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"created by this Work", member(nil, ours), true},
		{"annotations stripped, permanent id kept", member(map[string]string{workv1alpha1.WorkPermanentIDLabel: "id-1"}, nil), true},
		{"nobody's", member(nil, nil), false},
		{"managed label alone is not enough", member(map[string]string{workv1alpha1.ManagedByKarmadaLabel: "true"}, nil), false},
		{"another Work's", member(map[string]string{workv1alpha1.WorkPermanentIDLabel: "id-2"},
			map[string]string{workv1alpha1.WorkNamespaceAnnotation: work.Namespace, workv1alpha1.WorkNameAnnotation: "other"}), false},
		{"same name in another execution namespace", member(nil,
			map[string]string{workv1alpha1.WorkNamespaceAnnotation: "karmada-es-member2", workv1alpha1.WorkNameAnnotation: work.Name}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ManagedBy(tt.obj, work); got != tt.want {
				t.Errorf("ManagedBy = %v, want %v", got, tt.want)
			}
		})
	}
	noID := work.DeepCopy()
	noID.Labels = nil
	if ManagedBy(member(map[string]string{workv1alpha1.WorkPermanentIDLabel: ""}, nil), noID) {
		t.Error("an empty permanent id matched")
	}
}

func TestReleasePatch(t *testing.T) {
	obs := &unstructured.Unstructured{}
	obs.SetUID("uid-1")
	obs.SetLabels(map[string]string{"app": "nginx", workv1alpha1.ManagedByKarmadaLabel: "true", workv1alpha1.WorkPermanentIDLabel: "id-1"})
	obs.SetAnnotations(map[string]string{"keep": "x", workv1alpha1.WorkNameAnnotation: "w", ManifestHashAnnotation: "h"})
	patch, err := releasePatch(obs)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{
		"uid":         "uid-1",
		"labels":      map[string]any{workv1alpha1.ManagedByKarmadaLabel: nil, workv1alpha1.WorkPermanentIDLabel: nil},
		"annotations": map[string]any{workv1alpha1.WorkNameAnnotation: nil, ManifestHashAnnotation: nil},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}

	clean := &unstructured.Unstructured{}
	clean.SetLabels(map[string]string{"app": "nginx"})
	if patch, err := releasePatch(clean); err != nil || patch != nil {
		t.Errorf("releasePatch of a clean object = %s, %v; want nil", patch, err)
	}
}

func TestDispatchingCondition(t *testing.T) {
	got := dispatchingCondition(true, 3)
	want := metav1.Condition{Type: "Dispatching", Status: metav1.ConditionFalse, Reason: "SuspendDispatching", Message: messageSuspended, ObservedGeneration: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suspended (-want +got):\n%s", diff)
	}
	got = dispatchingCondition(false, 4)
	want = metav1.Condition{Type: "Dispatching", Status: metav1.ConditionTrue, Reason: "Dispatching", Message: messageDispatching, ObservedGeneration: 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dispatching (-want +got):\n%s", diff)
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
	long := "ééééééééééééééééééééé" // 2 bytes each
	got := truncate(long, 11)
	if len(got) > 11 {
		t.Errorf("truncate gave %d bytes, limit 11", len(got))
	}
	for i, r := range got {
		if r == '\uFFFD' {
			t.Errorf("invalid UTF-8 at %d in %q", i, got)
		}
	}
}

func TestWorkChanged(t *testing.T) {
	work := func(gen int64, labels map[string]string, deleting bool) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: gen, Labels: labels}}
		if deleting {
			now := metav1.Now()
			w.DeletionTimestamp = &now
		}
		return w
	}
	id := func(v string) map[string]string { return map[string]string{workv1alpha1.WorkPermanentIDLabel: v} }
	tests := []struct {
		name     string
		old, new *workv1alpha1.Work
		want     bool
	}{
		{"status only", work(1, id("a"), false), work(1, id("a"), false), false},
		{"spec", work(1, id("a"), false), work(2, id("a"), false), true},
		{"deletion", work(1, id("a"), false), work(1, id("a"), true), true},
		{"first permanent id", work(1, nil, false), work(1, id("a"), false), false},
		{"first permanent id and another label", work(1, nil, false), work(1, map[string]string{workv1alpha1.WorkPermanentIDLabel: "a", "x": "y"}, false), true},
		{"permanent id changed", work(1, id("a"), false), work(1, id("b"), false), true},
		{"permanent id removed", work(1, id("a"), false), work(1, nil, false), true},
		{"other label", work(1, id("a"), false), work(1, map[string]string{workv1alpha1.WorkPermanentIDLabel: "a", "x": "y"}, false), true},
	}
	for _, tt := range tests {
		if got := WorkChanged(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: WorkChanged = %v, want %v", tt.name, got, tt.want)
		}
	}
}
