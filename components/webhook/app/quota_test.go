package app

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/federatedquota"
)

// TestQuotaThroughAPIServer: the API server's matchConditions pick which
// binding writes reach /validate-resourcebinding; every write that adds
// usage must still be checked, whether it creates the binding scheduled,
// schedules it, or changes its replicas or requirements.
func TestQuotaThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "quota-"}}
	if err := cp.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Delete(context.Background(), ns) })
	frq := &policyv1alpha1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: ns.Name},
		Spec:       policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}
	if err := cp.Create(ctx, frq); err != nil {
		t.Fatal(err)
	}

	binding := func(name string, clusters ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns.Name, Name: name},
				Replicas:            8,
				ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
				Clusters:            clusters,
			},
		}
	}
	refused := func(t *testing.T, err error) {
		t.Helper()
		var status apierrors.APIStatus
		if err == nil {
			t.Fatal("allowed, want refused over quota")
		}
		if !apierrors.IsForbidden(err) || !asStatus(err, &status) || status.Status().Reason != federatedquota.ExceededReason {
			t.Fatalf("refused with %v, want %d %s", err, http.StatusForbidden, federatedquota.ExceededReason)
		}
	}

	// Created scheduled over the quota (5 × 250m > 1).
	refused(t, cp.Create(ctx, binding("scheduled", workv1alpha2.TargetCluster{Name: "member1", Replicas: 5})))

	// Created unscheduled, as the detector does: nothing to check.
	rb := binding("web")
	if err := cp.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	// Scheduled over the quota, as the scheduler does.
	over := rb.DeepCopy()
	over.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}, {Name: "member2", Replicas: 2}}
	refused(t, cp.Update(ctx, over))
	// Scheduled within it.
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 2}}
	if err := cp.Update(ctx, rb); err != nil {
		t.Fatalf("scheduling within the quota: %v", err)
	}
	// Within it no longer once the requirements grow (4 × 750m - 4 × 250m > 1).
	bigger := rb.DeepCopy()
	bigger.Spec.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU] = resource.MustParse("750m")
	refused(t, cp.Update(ctx, bigger))

	// The quota's usage now counts this binding (the status controller's
	// work): one more replica anywhere goes over.
	frq.Status.OverallUsed = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if err := cp.Status().Update(ctx, frq); err != nil {
		t.Fatal(err)
	}
	more := rb.DeepCopy()
	more.Spec.Clusters[1].Replicas = 3
	refused(t, cp.Update(ctx, more))
	// A write that leaves the usage alone passes even at the limit.
	if err := cp.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
		t.Fatal(err)
	}
	rb.Labels = map[string]string{"team": "a"}
	if err := cp.Update(ctx, rb); err != nil {
		t.Fatalf("relabelling at the limit: %v", err)
	}
}

func asStatus(err error, status *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*status = s
	}
	return ok
}
