package taintmanager_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/components/controller-manager/internal/taintmanager"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	added := func(ago time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-ago)); return &t }
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: added(time.Minute)}
	unreachable := corev1.Taint{Key: "cluster.karmada.io/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: added(4 * time.Minute)}
	tolerate := func(key string, seconds *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	tests := []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		wait        time.Duration
		evict       bool
	}{
		{"untolerated: now", []corev1.Taint{notReady}, nil, 0, true},
		{"tolerated for good", []corev1.Taint{notReady}, []corev1.Toleration{tolerate(notReady.Key, nil)}, 0, false},
		{"tolerated for a while", []corev1.Taint{notReady}, []corev1.Toleration{tolerate(notReady.Key, ptr.To[int64](300))}, 4 * time.Minute, false},
		{"toleration ran out", []corev1.Taint{unreachable}, []corev1.Toleration{tolerate(unreachable.Key, ptr.To[int64](60))}, 0, true},
		{"one of two untolerated", []corev1.Taint{notReady, unreachable}, []corev1.Toleration{tolerate(notReady.Key, nil)}, 0, true},
		{"shortest toleration wins", []corev1.Taint{notReady, unreachable}, []corev1.Toleration{
			tolerate(notReady.Key, ptr.To[int64](600)), tolerate(unreachable.Key, ptr.To[int64](300))}, time.Minute, false},
		{"wildcard toleration", []corev1.Taint{notReady, unreachable}, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, 0, false},
		{"NoSchedule toleration does not cover NoExecute", []corev1.Taint{notReady},
			[]corev1.Toleration{{Key: notReady.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, 0, true},
		{"taint without a time counts from now", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}},
			[]corev1.Toleration{tolerate("k", ptr.To[int64](30))}, 30 * time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wait, evict := taintmanager.Decide(tc.taints, tc.tolerations, now)
			if wait != tc.wait || evict != tc.evict {
				t.Errorf("Decide = %v, %v; want %v, %v", wait, evict, tc.wait, tc.evict)
			}
		})
	}
}
