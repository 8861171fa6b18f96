package bindingstatus_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/binding"
)

// A ClusterIP Service has no status to aggregate into the template, yet
// its binding's status is aggregated: AggregateStatusSucceed is recorded
// on the binding and on the template, with Karmada's message, as a client
// watching core/v1 Events sees it.
func TestAggregateStatusEventsForKindWithoutStatus(t *testing.T) {
	start(t, 2, 0)
	ns := namespace(t, "clusterip")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if err := apiClient.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	rb := scheduledBinding(t, ref(svc, "v1", "Service"), 0, workv1alpha2.TargetCluster{Name: "member1"})
	k := createWork(t, binding.ViewOf(rb), "member1")
	reportApplied(t, k, schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services", map[string]any{})

	want := fmt.Sprintf("Update ResourceBinding(%s/%s) with AggregatedStatus successfully.", ns, rb.Name)
	for _, obj := range []struct{ kind, name string }{{"ResourceBinding", rb.Name}, {"Service", svc.Name}} {
		waitFor(t, "AggregateStatusSucceed on "+obj.kind+" "+obj.name, func(ctx context.Context) (bool, error) {
			var list corev1.EventList
			if err := apiClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, ev := range list.Items {
				o := ev.InvolvedObject
				if o.Kind != obj.kind || o.Name != obj.name || ev.Reason != "AggregateStatusSucceed" {
					continue
				}
				if ev.Type != corev1.EventTypeNormal || ev.Message != want {
					return false, fmt.Errorf("event %s %q, want Normal %q", ev.Type, ev.Message, want)
				}
				return true, nil
			}
			return false, nil
		})
	}
}
