package clusterstatus_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/clusterstatus"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// One member with two kwok nodes of 8 cpu, 32Gi and 110 pods each.
var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      1,
	Nodes:        localfed.NodeOptions{Count: 2},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// start runs the cluster-status controller alone: a member nobody has
// judged yet (no Ready condition) is collected. The controller-manager's
// cluster package tests it beside the cluster controller, which sets Ready.
func start(t *testing.T) (*localfed.Federation, *controllertest.Env) {
	t.Helper()
	f := fed.Get(t)
	e := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		return (&clusterstatus.Reconciler{
			Client:    mgr.GetClient(),
			Members:   e.Members,
			Informers: e.Informers,
			Period:    500 * time.Millisecond,
		}).SetupWithManager(mgr)
	})
	return f, e
}

func getCluster(ctx context.Context, c client.Client, name string) (*clusterv1alpha1.Cluster, error) {
	var obj clusterv1alpha1.Cluster
	err := c.Get(ctx, client.ObjectKey{Name: name}, &obj)
	return &obj, err
}

// quantityIs reports whether l[name] equals want.
func quantityIs(l corev1.ResourceList, name corev1.ResourceName, want string) bool {
	q, ok := l[name]
	return ok && q.Cmp(resource.MustParse(want)) == 0
}

func TestStatusIsCollected(t *testing.T) {
	f, e := start(t)
	name := f.Members[0].Name

	var got *clusterv1alpha1.Cluster
	controllertest.WaitFor(t, "status collected", func(ctx context.Context) (bool, error) {
		obj, err := getCluster(ctx, e.Client, name)
		if err != nil {
			return false, err
		}
		got = obj
		s := obj.Status
		return s.KubernetesVersion != "" && len(s.APIEnablements) > 0 && s.NodeSummary != nil && s.ResourceSummary != nil, nil
	})

	s := got.Status
	if !strings.HasPrefix(s.KubernetesVersion, "v1.") {
		t.Errorf("kubernetesVersion = %q", s.KubernetesVersion)
	}
	cond := meta.FindStatusCondition(s.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != clusterv1alpha1.APIEnablementsReasonComplete {
		t.Errorf("CompleteAPIEnablements = %+v, want True", cond)
	}
	gvs := make([]string, len(s.APIEnablements))
	for i, e := range s.APIEnablements {
		gvs[i] = e.GroupVersion
	}
	if !slices.IsSorted(gvs) || !slices.Contains(gvs, "apps/v1") || !slices.Contains(gvs, "v1") {
		t.Errorf("apiEnablements group-versions = %v, want sorted with v1 and apps/v1", gvs)
	}
	for _, e := range s.APIEnablements {
		if e.GroupVersion != "apps/v1" {
			continue
		}
		if !slices.Contains(e.Resources, clusterv1alpha1.APIResource{Name: "deployments", Kind: "Deployment"}) {
			t.Errorf("apps/v1 resources = %v, want deployments", e.Resources)
		}
		for _, r := range e.Resources {
			if strings.Contains(r.Name, "/") {
				t.Errorf("subresource %s listed", r.Name)
			}
		}
	}
	if *s.NodeSummary != (clusterv1alpha1.NodeSummary{TotalNum: 2, ReadyNum: 2}) {
		t.Errorf("nodeSummary = %+v, want 2 of 2 ready", *s.NodeSummary)
	}
	alloc := s.ResourceSummary.Allocatable
	if !quantityIs(alloc, corev1.ResourceCPU, "16") || !quantityIs(alloc, corev1.ResourceMemory, "64Gi") || !quantityIs(alloc, corev1.ResourcePods, "220") {
		t.Errorf("allocatable = %v, want 16 cpu, 64Gi, 220 pods", alloc)
	}
}

// TestResourceSummaryFollowsPods runs a pod that fits and one that does not,
// and watches allocated and allocating follow.
func TestResourceSummaryFollowsPods(t *testing.T) {
	f, e := start(t)
	member := f.Members[0]
	ctx := t.Context()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "summary"}}
	if err := member.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member.Client.Delete(context.Background(), ns) })
	newPod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "app", Image: "app",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse(cpu),
						corev1.ResourceMemory: resource.MustParse("1Gi"),
					}},
				}},
			},
		}
	}
	fits, tooBig := newPod("fits", "1500m"), newPod("too-big", "100")
	for _, p := range []*corev1.Pod{fits, tooBig} {
		if err := member.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	summaryIs := func(what string, check func(*clusterv1alpha1.ResourceSummary) bool) {
		t.Helper()
		controllertest.WaitFor(t, what, func(ctx context.Context) (bool, error) {
			obj, err := getCluster(ctx, e.Client, member.Name)
			if err != nil {
				return false, err
			}
			rs := obj.Status.ResourceSummary
			if rs == nil {
				return false, nil
			}
			if !check(rs) {
				return false, fmt.Errorf("allocated %v, allocating %v", rs.Allocated, rs.Allocating)
			}
			return true, nil
		})
	}
	summaryIs("the scheduled pod is allocated and the unschedulable one allocating", func(rs *clusterv1alpha1.ResourceSummary) bool {
		return quantityIs(rs.Allocated, corev1.ResourceCPU, "1500m") && quantityIs(rs.Allocated, corev1.ResourceMemory, "1Gi") &&
			quantityIs(rs.Allocated, corev1.ResourcePods, "1") &&
			quantityIs(rs.Allocating, corev1.ResourceCPU, "100") && quantityIs(rs.Allocating, corev1.ResourcePods, "1")
	})

	for _, p := range []*corev1.Pod{fits, tooBig} {
		if err := member.Client.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	summaryIs("nothing allocated once the pods are gone", func(rs *clusterv1alpha1.ResourceSummary) bool {
		return quantityIs(rs.Allocated, corev1.ResourceCPU, "0") && quantityIs(rs.Allocated, corev1.ResourcePods, "0") &&
			quantityIs(rs.Allocating, corev1.ResourcePods, "0")
	})
}
