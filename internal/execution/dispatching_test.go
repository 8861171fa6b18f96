package execution_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/events"
)

// TestWorkDispatchingEventWhenFirstDispatched: a Work that was never
// suspended gets Karmada's WorkDispatching event when its Dispatching
// condition first becomes True, as a client watching core/v1 Events sees
// it.
func TestWorkDispatchingEventWhenFirstDispatched(t *testing.T) {
	e := start(t)
	ns := e.memberNamespace(t, "t-dispatching")
	w := newWork(t, "member1", "dispatched", configMap(ns, "plain", map[string]string{"k": "v"}))
	e.create(t, w)
	key := client.ObjectKeyFromObject(w)
	e.conditionIs(t, key, workv1alpha1.WorkDispatching, metav1.ConditionTrue, workv1alpha1.WorkReasonDispatching)
	controllertest.WaitFor(t, "a WorkDispatching event on the Work", func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := e.cp.List(ctx, &list, client.InNamespace(key.Namespace)); err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if o.Kind == "Work" && o.Name == key.Name && ev.Reason == events.ReasonWorkDispatching {
				if ev.Type != corev1.EventTypeNormal || ev.Message != "Work is being dispatched to member clusters." {
					t.Errorf("WorkDispatching event %s %q, want Normal %q", ev.Type, ev.Message, "Work is being dispatched to member clusters.")
				}
				return true, nil
			}
		}
		return false, nil
	})
}
