package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/bootstrap"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// TestUnjoinOnlyTarget removes members that are the only target of a
// Deployment, a Push member by unjoin and a Pull member by unregister:
// each returns with the Cluster gone and nothing left in its execution
// namespace, the Deployment is removed from the member, and the binding no
// longer names the cluster. The binding still targeting the cluster must
// not bring its Work back while the cluster leaves.
func TestUnjoinOnlyTarget(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{
		Members: 1, PullMembers: 1, Nodes: localfed.NodeOptions{Count: 1}, StartTimeout: 5 * time.Minute,
		AgentArgs: []string{"--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s"},
	})
	c := mixedClient(t, f)
	runComponents(t, f, "--cluster-monitor-grace-period=4s", "--cluster-health-probe-period=1s", "--cluster-status-update-frequency=1s")
	push, pull := f.Members[0], f.Members[1]
	for _, m := range []string{push.Name, pull.Name} {
		clusterHealthIs(t, c, m, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
	}

	for _, tc := range []struct {
		member *localfed.Cluster
		remove func(ctx context.Context) error
	}{
		{push, func(ctx context.Context) error {
			return join.Unjoin(ctx, c, push.Client, push.Name, "", 90*time.Second)
		}},
		{pull, func(ctx context.Context) error {
			return bootstrap.Unregister(ctx, c, nil, pull.Name, 90*time.Second)
		}},
	} {
		name := tc.member.Name
		t.Run(name, func(t *testing.T) {
			d := deployment("default", "only-on-"+name, 1, "nginx")
			if err := c.Create(t.Context(), d); err != nil {
				t.Fatal(err)
			}
			pp := propagationPolicy("default", d.Name, []string{name}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name})
			if err := c.Create(t.Context(), pp); err != nil {
				t.Fatal(err)
			}
			pollFor(t, "Deployment available in "+name, func(ctx context.Context) (bool, error) {
				var got appsv1.Deployment
				if err := tc.member.Client.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
					return false, client.IgnoreNotFound(err)
				}
				return got.Status.AvailableReplicas == 1, nil
			})

			if err := tc.remove(t.Context()); err != nil {
				t.Fatalf("removing %s: %v", name, err)
			}
			if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
				t.Errorf("Cluster %s after removal: %v, want NotFound", name, err)
			}
			var works workv1alpha1.WorkList
			if err := c.List(t.Context(), &works, client.InNamespace(names.ExecutionSpace(name))); err != nil {
				t.Fatal(err)
			}
			if len(works.Items) != 0 {
				t.Errorf("%d Works left in %s after removal", len(works.Items), names.ExecutionSpace(name))
			}
			if err := c.Get(t.Context(), client.ObjectKey{Name: names.ExecutionSpace(name)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				t.Errorf("execution namespace after removal: %v, want NotFound", err)
			}
			pollFor(t, "Deployment removed from "+name, func(ctx context.Context) (bool, error) {
				err := tc.member.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
			pollFor(t, "binding off "+name, func(ctx context.Context) (bool, error) {
				var rb workv1alpha2.ResourceBinding
				if err := c.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: names.Binding(d.Name, "Deployment")}, &rb); err != nil {
					return false, err
				}
				return !slices.ContainsFunc(rb.Spec.Clusters, func(tc workv1alpha2.TargetCluster) bool { return tc.Name == name }), nil
			})
		})
	}
}
