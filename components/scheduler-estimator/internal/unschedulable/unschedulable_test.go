package unschedulable

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// pending is a pod whose PodScheduled condition is status with reason,
// since now minus ago.
func pending(name string, status corev1.ConditionStatus, reason string, ago time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
			{Type: corev1.PodScheduled, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-ago))},
		}},
	}
}

func TestCount(t *testing.T) {
	pods := []*corev1.Pod{
		pending("long", corev1.ConditionFalse, corev1.PodReasonUnschedulable, 10*time.Minute),
		pending("recent", corev1.ConditionFalse, corev1.PodReasonUnschedulable, time.Minute),
		pending("gated", corev1.ConditionFalse, corev1.PodReasonSchedulingGated, time.Hour),
		pending("scheduled", corev1.ConditionTrue, "", time.Hour),
		{ObjectMeta: metav1.ObjectMeta{Name: "no-conditions"}},
	}
	tests := []struct {
		threshold time.Duration
		want      int32
	}{
		{threshold: 5 * time.Minute, want: 1},
		{threshold: 30 * time.Second, want: 2},
		{threshold: 0, want: 2},
		{threshold: -time.Hour, want: 2},
		{threshold: time.Hour, want: 0},
		// exactly at the threshold is not longer than it.
		{threshold: 10 * time.Minute, want: 0},
	}
	for _, tt := range tests {
		if got := Count(pods, tt.threshold, now); got != tt.want {
			t.Errorf("threshold %s: Count = %d, want %d", tt.threshold, got, tt.want)
		}
	}
}

func template(image string, labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

func controlledBy(uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "owner", UID: uid, Controller: new(true)}}
}

func replicaSet(name string, created time.Time, owner types.UID, image, hash string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created), OwnerReferences: controlledBy(owner)},
		Spec:       appsv1.ReplicaSetSpec{Template: template(image, map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: hash})},
	}
}

// TestPods: a Deployment's replicas are the pods of its current ReplicaSet,
// found through real informer indexers.
func TestPods(t *testing.T) {
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "web-uid"},
		Spec:       appsv1.DeploymentSpec{Template: template("web:v2", map[string]string{"app": "web"})},
	}
	newDeployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fresh", UID: "fresh-uid"},
		Spec:       appsv1.DeploymentSpec{Template: template("fresh:v1", nil)},
	}
	old := replicaSet("web-old", now.Add(-time.Hour), "web-uid", "web:v1", "aaa")
	current := replicaSet("web-current", now.Add(-time.Minute), "web-uid", "web:v2", "bbb")
	// Another Deployment's ReplicaSet with the same template is not web's.
	foreign := replicaSet("other", now.Add(-2*time.Hour), "other-uid", "web:v2", "bbb")

	withOwner := func(p *corev1.Pod, rs *appsv1.ReplicaSet) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: new(true)}}
		return p
	}
	deployments := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	replicaSets := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{ControllerIndex: IndexByController})
	pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{ControllerIndex: IndexByController})
	for _, o := range []any{deployment, newDeployment} {
		if err := deployments.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []any{old, current, foreign} {
		if err := replicaSets.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []any{
		withOwner(pending("old-1", corev1.ConditionFalse, corev1.PodReasonUnschedulable, time.Hour), old),
		withOwner(pending("cur-1", corev1.ConditionFalse, corev1.PodReasonUnschedulable, time.Hour), current),
		withOwner(pending("cur-2", corev1.ConditionTrue, "", time.Hour), current),
		withOwner(pending("foreign-1", corev1.ConditionFalse, corev1.PodReasonUnschedulable, time.Hour), foreign),
	} {
		if err := pods.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	w := &Workloads{Deployments: appslisters.NewDeploymentLister(deployments), ReplicaSets: replicaSets, Pods: pods}

	got, err := w.PodsOf(estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(got))
	for _, p := range got {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "cur-1,cur-2" && strings.Join(names, ",") != "cur-2,cur-1" {
		t.Errorf("pods = %v, want cur-1 and cur-2", names)
	}
	if n := Count(got, time.Minute, now); n != 1 {
		t.Errorf("Count = %d, want 1", n)
	}

	got, err = w.PodsOf(estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "fresh"})
	if err != nil || len(got) != 0 {
		t.Errorf("Deployment without a ReplicaSet yet: pods = %v, %v; want none", got, err)
	}

	_, err = w.PodsOf(estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "absent"})
	if !apierrors.IsNotFound(err) {
		t.Errorf("absent Deployment: error = %v, want NotFound", err)
	}

	for _, tt := range []struct {
		ref  estimatorrpc.ObjectReference
		want string
	}{
		{estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "ns", Name: "db"}, "resource.kind"},
		{estimatorrpc.ObjectReference{APIVersion: "batch/v1", Kind: "Deployment", Namespace: "ns", Name: "db"}, "resource.kind"},
		{estimatorrpc.ObjectReference{APIVersion: "a/b/c", Kind: "Deployment", Namespace: "ns", Name: "db"}, "resource.apiVersion"},
		{estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "db"}, "resource.namespace"},
		{estimatorrpc.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns"}, "resource.name"},
	} {
		if _, err := w.PodsOf(tt.ref); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error = %v, want one naming %s", tt.ref, err, tt.want)
		}
	}
}

func TestCurrentReplicaSetOldestMatch(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: template("v1", map[string]string{"app": "web"})}}
	a := replicaSet("a", now, "d", "v1", "x")
	b := replicaSet("b", now.Add(-time.Minute), "d", "v1", "y")
	if got := CurrentReplicaSet(d, []*appsv1.ReplicaSet{a, b}); got != b {
		t.Errorf("CurrentReplicaSet = %v, want the older match b", got)
	}
	if got := CurrentReplicaSet(d, []*appsv1.ReplicaSet{replicaSet("c", now, "d", "v2", "z")}); got != nil {
		t.Errorf("CurrentReplicaSet = %v, want none", got)
	}
}
