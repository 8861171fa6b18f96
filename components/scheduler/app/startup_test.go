package app

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/servedkinds/servedkindstest"
)

// TestWaitsForKarmadasKinds starts the scheduler against an API server
// that does not serve Karmada's kinds yet: it waits, saying so, alive and
// not ready; once the CRDs are installed it starts and schedules.
func TestWaitsForKarmadasKinds(t *testing.T) {
	cfg, poll := servedkindstest.WaitsThenStarts(t, func(ctx context.Context, cfg *rest.Config, probeAddr string, logger logr.Logger) error {
		opts, err := ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address="+probeAddr)
		if err != nil {
			return err
		}
		return Run(ctx, cfg, opts, logger)
	})

	scheme := runtime.NewScheme()
	if err := workv1alpha2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late-configmap"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:      workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "late"},
			Placement:     &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"absent"}}},
			SchedulerName: policyv1alpha1.DefaultSchedulerName,
		},
	}
	if err := c.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	poll("the scheduler decides on the binding", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err
		}
		return meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled) != nil, nil
	})
}
