package bindingstatus

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// recordingQueue notes what is added and when it would be ready.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []delayedAdd
}

type delayedAdd struct {
	req   reconcile.Request
	after time.Duration
}

func (q *recordingQueue) Add(req reconcile.Request) { q.added = append(q.added, delayedAdd{req, 0}) }
func (q *recordingQueue) AddAfter(req reconcile.Request, after time.Duration) {
	q.added = append(q.added, delayedAdd{req, after})
}

func TestDelayedEnqueue(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-deployment"}}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "w", Annotations: map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotationKey: "default", workv1alpha2.ResourceBindingNameAnnotationKey: "nginx-deployment",
	}}}
	orphan := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "orphan"}}
	bindingReq := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)}

	ctx := context.Background()
	tests := []struct {
		name string
		fire func(q *recordingQueue)
		want []delayedAdd
	}{
		{"binding created", func(q *recordingQueue) {
			delayed(itself).Create(ctx, event.CreateEvent{Object: rb}, q)
		}, []delayedAdd{{bindingReq, aggregationDelay}}},
		{"binding updated", func(q *recordingQueue) {
			delayed(itself).Update(ctx, event.UpdateEvent{ObjectOld: rb, ObjectNew: rb}, q)
		}, []delayedAdd{{bindingReq, aggregationDelay}}},
		{"Work updated and deleted", func(q *recordingQueue) {
			h := delayed(resourceBindingOfWork)
			h.Update(ctx, event.UpdateEvent{ObjectOld: work, ObjectNew: work}, q)
			h.Delete(ctx, event.DeleteEvent{Object: work}, q)
		}, []delayedAdd{{bindingReq, aggregationDelay}, {bindingReq, aggregationDelay}}},
		{"Work of no binding", func(q *recordingQueue) {
			delayed(resourceBindingOfWork).Create(ctx, event.CreateEvent{Object: orphan}, q)
		}, nil},
	}
	for _, tt := range tests {
		q := &recordingQueue{}
		tt.fire(q)
		if diff := cmp.Diff(tt.want, q.added, cmp.AllowUnexported(delayedAdd{})); diff != "" {
			t.Errorf("%s: queued (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestDelayedQueueCoalesces checks, with a real delaying queue, that a
// binding enqueued several times within the delay is handed out once.
func TestDelayedQueueCoalesces(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-deployment"}}
	h := delayed(itself)
	for range 5 {
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: rb, ObjectNew: rb}, q)
	}
	req, shutdown := q.Get()
	if shutdown {
		t.Fatal("queue shut down")
	}
	q.Done(req)
	if n := q.Len(); n != 0 {
		t.Errorf("%d more requests after the first, want the 5 changes handed out once", n)
	}
}
