package scheduler

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/queue"
)

// TestRefitCycle runs the cycles of a binding queued by a cluster change
// against a fake API: what is written, and what comes back for a retry.
func TestRefitCycle(t *testing.T) {
	prod := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	matching := func(name string) *fixture.ClusterBuilder { return fixture.Cluster(name).Label("env", "prod") }
	type cycle struct {
		outcome queue.Outcome
		pending bool // a refit is still asked for after the cycle
	}
	tests := []struct {
		name      string
		clusters  []*fixture.ClusterBuilder
		conflicts int // patches refused with a conflict before one passes
		cycles    []cycle
		want      []workv1alpha2.TargetCluster
		wantFit   bool // Scheduled=True at the end, else NoClusterFit
		patches   int
	}{{
		name:     "nothing moved: no write",
		clusters: []*fixture.ClusterBuilder{matching("a"), matching("b")},
		cycles:   []cycle{{outcome: queue.Done}},
		want:     []workv1alpha2.TargetCluster{fixture.T("a", 2), fixture.T("b", 2)},
		wantFit:  true,
	}, {
		name:     "a cluster stopped matching",
		clusters: []*fixture.ClusterBuilder{matching("a"), fixture.Cluster("b")},
		cycles:   []cycle{{outcome: queue.Done}},
		want:     []workv1alpha2.TargetCluster{fixture.T("a", 2)},
		wantFit:  true,
		patches:  2,
	}, {
		name:     "no cluster matches",
		clusters: []*fixture.ClusterBuilder{fixture.Cluster("a"), fixture.Cluster("b")},
		cycles:   []cycle{{outcome: queue.Unschedulable}},
		patches:  2,
	}, {
		name:      "a conflicting write is refitted on retry",
		clusters:  []*fixture.ClusterBuilder{matching("a"), fixture.Cluster("b")},
		conflicts: 1,
		cycles:    []cycle{{outcome: queue.Failed, pending: true}, {outcome: queue.Done}},
		want:      []workv1alpha2.TargetCluster{fixture.T("a", 2)},
		wantFit:   true,
		patches:   3,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rb := scheduled(fixture.Binding("x").Replicas(2).Affinity(prod).Scheduled(fixture.T("a", 2), fixture.T("b", 2)))
			scheme := runtime.NewScheme()
			if err := workv1alpha2.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			conflicts, patches := tc.conflicts, 0
			refuse := func() error {
				patches++
				if conflicts > 0 {
					conflicts--
					return apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "resourcebindings"}, rb.Name, nil)
				}
				return nil
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rb).
				WithStatusSubresource(&workv1alpha2.ResourceBinding{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
						if err := refuse(); err != nil {
							return err
						}
						return c.Patch(ctx, obj, p, opts...)
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						if err := refuse(); err != nil {
							return err
						}
						return c.SubResource(sub).Patch(ctx, obj, p, opts...)
					},
				}).Build()
			s := New(c, nil, Options{})
			for _, cl := range tc.clusters {
				s.clusters.AddOrUpdate(cl.Obj())
			}
			key := queue.Key{Namespace: rb.Namespace, Name: rb.Name}
			s.markRefit(key)
			for i, want := range tc.cycles {
				if got := s.scheduleOne(ctx, key); got != want.outcome {
					t.Errorf("cycle %d: outcome %v, want %v", i, got, want.outcome)
				}
				if got := s.refitPending(key); got != want.pending {
					t.Errorf("cycle %d: refit pending %v, want %v", i, got, want.pending)
				}
				// The informer would have caught up before the retry.
				s.writes.forget(key)
			}

			got := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.Scheduled)
			switch {
			case tc.wantFit && (cond == nil || cond.Status != metav1.ConditionTrue):
				t.Errorf("condition %+v, want Scheduled", cond)
			case !tc.wantFit && (cond == nil || cond.Reason != workv1alpha2.BindingReasonNoClusterFit):
				t.Errorf("condition %+v, want NoClusterFit", cond)
			}
			if patches != tc.patches {
				t.Errorf("%d patches, want %d", patches, tc.patches)
			}
			if tc.patches == 0 && got.ResourceVersion != rb.ResourceVersion {
				t.Errorf("resourceVersion %s -> %s without a patch", rb.ResourceVersion, got.ResourceVersion)
			}
		})
	}
}
