package karmada

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDeploymentRolledOut(t *testing.T) {
	deploy := func(gen, observed int64, replicas, updated, total, ready, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "x-apiserver", Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated,
				Replicas: total, ReadyReplicas: ready, AvailableReplicas: available},
		}
	}
	tests := []struct {
		name string
		d    *appsv1.Deployment
		want bool
		msg  string
	}{
		{"rolled out", deploy(2, 2, 2, 2, 2, 2, 2), true, ""},
		{"spec not observed", deploy(3, 2, 2, 2, 2, 2, 2), false, "Deployment x-apiserver: waiting for the controller to observe generation 3"},
		{"one old pod ready, new one not", deploy(2, 2, 1, 1, 2, 1, 1), false, "Deployment x-apiserver: 1 old replicas still running"},
		{"new pods not updated yet", deploy(2, 2, 2, 1, 2, 2, 2), false, "Deployment x-apiserver: 1 of 2 replicas updated"},
		{"updated, not available", deploy(2, 2, 2, 2, 2, 1, 1), false, "Deployment x-apiserver: 1 of 2 replicas available"},
		{"scaled to zero", deploy(1, 1, 0, 0, 0, 0, 0), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := deploymentRolledOut(tt.d)
			if got != tt.want || msg != tt.msg {
				t.Errorf("got %v %q, want %v %q", got, msg, tt.want, tt.msg)
			}
		})
	}
}

func TestStatefulSetRolledOut(t *testing.T) {
	sts := func(gen, observed int64, replicas, updated, total, ready int32, current, update string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "x-etcd", Generation: gen},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: observed, UpdatedReplicas: updated, Replicas: total,
				ReadyReplicas: ready, CurrentRevision: current, UpdateRevision: update},
		}
	}
	tests := []struct {
		name string
		s    *appsv1.StatefulSet
		want bool
	}{
		{"rolled out", sts(1, 1, 3, 3, 3, 3, "r1", "r1"), true},
		{"not observed", sts(2, 1, 3, 3, 3, 3, "r1", "r1"), false},
		{"revision rolling", sts(2, 2, 3, 3, 3, 3, "r1", "r2"), false},
		{"not ready", sts(1, 1, 3, 3, 3, 2, "r1", "r1"), false},
		{"scaling down", sts(2, 2, 1, 1, 3, 3, "r1", "r1"), false},
	}
	for _, tt := range tests {
		if got, msg := statefulSetRolledOut(tt.s); got != tt.want {
			t.Errorf("%s: got %v (%s), want %v", tt.name, got, msg, tt.want)
		}
	}
}
