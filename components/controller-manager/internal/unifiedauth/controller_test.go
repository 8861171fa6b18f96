package unifiedauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/unifiedauth"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	flotillaevents "github.com/flotilla-io/flotilla/internal/events"
	"github.com/flotilla-io/flotilla/internal/names"
)

var server *controllertest.APIServer

func TestMain(m *testing.M) {
	scheme, err := controllertest.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, err = controllertest.StartAPIServer(scheme)
	if errors.Is(err, controllertest.ErrNoBinaries) {
		fmt.Fprintln(os.Stderr, "skipping the integration tests:", err)
		os.Exit(m.Run())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := server.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// TestController runs the controller against an API server: Works appear
// for a Cluster with an impersonator, and follow the control plane's RBAC
// on clusters/proxy.
func TestController(t *testing.T) {
	if server == nil {
		t.Skip("no Kubernetes binaries")
	}
	ctx := t.Context()
	cp := server.Client
	controllertest.Start(t, server.Config, func(mgr ctrl.Manager, _ *controllertest.Env) error {
		return (&unifiedauth.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(unifiedauth.ControllerName)}).SetupWithManager(mgr)
	})
	newCluster := func(name string, mode clusterv1alpha1.ClusterSyncMode, impersonator bool) {
		t.Helper()
		if err := cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(name)}}); err != nil {
			t.Fatal(err)
		}
		c := &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       clusterv1alpha1.ClusterSpec{SyncMode: mode, APIEndpoint: "https://127.0.0.1:1"},
		}
		if impersonator {
			c.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name + "-impersonator"}
		}
		if err := cp.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	newCluster("member1", clusterv1alpha1.Push, true)
	newCluster("member2", clusterv1alpha1.Push, true)
	// A Pull member whose agent reports its impersonator is served alike:
	// its agent applies the Works.
	newCluster("pull1", clusterv1alpha1.Pull, true)
	newCluster("no-impersonator", clusterv1alpha1.Push, false)

	// impersonable reads the users of the ClusterRole member's Work carries.
	impersonable := func(ctx context.Context, member string) (users, groups []string, err error) {
		role := &rbacv1.ClusterRole{}
		if err := manifestOf(ctx, cp, member, unifiedauth.RoleWorkName, role); err != nil {
			return nil, nil, err
		}
		for _, r := range role.Rules {
			switch {
			case slices.Contains(r.Resources, "users"):
				users = r.ResourceNames
			case slices.Contains(r.Resources, "groups"):
				groups = r.ResourceNames
			}
		}
		return users, groups, nil
	}
	waitUsers := func(member, what string, cond func(users []string) bool) {
		t.Helper()
		controllertest.WaitFor(t, member+": "+what, func(ctx context.Context) (bool, error) {
			users, _, err := impersonable(ctx, member)
			return err == nil && cond(users), err
		})
	}

	t.Run("Works for a cluster with an impersonator", func(t *testing.T) {
		for _, m := range []string{"member1", "member2", "pull1"} {
			waitUsers(m, "the ClusterRole's Work exists", func([]string) bool { return true })
			_, groups, err := impersonable(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			// cluster-admin, bound to system:masters, allows every
			// resource: the control plane's administrators keep the proxy.
			if !slices.Contains(groups, "system:masters") {
				t.Errorf("%s: impersonable groups %v, want system:masters among them", m, groups)
			}
			binding := &rbacv1.ClusterRoleBinding{}
			if err := manifestOf(ctx, cp, m, unifiedauth.BindingWorkName, binding); err != nil {
				t.Fatal(err)
			}
			want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "karmada-cluster", Name: "karmada-impersonator"}}
			if binding.Name != "karmada-impersonator" || binding.RoleRef.Name != "karmada-impersonator" || !slices.Equal(binding.Subjects, want) {
				t.Errorf("%s: ClusterRoleBinding %s to %s for %v, want karmada-impersonator to karmada-impersonator for %v",
					m, binding.Name, binding.RoleRef.Name, binding.Subjects, want)
			}
			w := &workv1alpha1.Work{}
			if err := cp.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(m), Name: unifiedauth.RoleWorkName}, w); err != nil {
				t.Fatal(err)
			}
			if len(w.OwnerReferences) != 1 || w.OwnerReferences[0].Name != m || !slices.Contains(w.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
				t.Errorf("%s: Work owners %+v, finalizers %v; want the Cluster and the execution finalizer", m, w.OwnerReferences, w.Finalizers)
			}
		}
		controllertest.WaitFor(t, "the success event", func(ctx context.Context) (bool, error) {
			return controllertest.HasEvent(ctx, cp, "member1", flotillaevents.ReasonSyncImpersonationConfigSucceed)
		})
		err := cp.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace("no-impersonator"), Name: unifiedauth.RoleWorkName}, &workv1alpha1.Work{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("a cluster without impersonator secret: %v, want no Work", err)
		}
	})

	t.Run("follows clusters/proxy rights", func(t *testing.T) {
		create(ctx, t, cp,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-member1"}, Rules: []rbacv1.PolicyRule{{
				Verbs: []string{"get"}, APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-proxy"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-member1"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
		waitUsers("member1", "alice may be impersonated", func(u []string) bool { return slices.Contains(u, "alice") })
		if users, _, err := impersonable(ctx, "member2"); err != nil || slices.Contains(users, "alice") {
			t.Errorf("member2's impersonable users %v (%v): alice may proxy to member1 only", users, err)
		}

		// The role widened to every cluster: member2 follows.
		role := &rbacv1.ClusterRole{}
		if err := cp.Get(ctx, client.ObjectKey{Name: "proxy-member1"}, role); err != nil {
			t.Fatal(err)
		}
		role.Rules[0].ResourceNames = nil
		if err := cp.Update(ctx, role); err != nil {
			t.Fatal(err)
		}
		waitUsers("member2", "alice may be impersonated", func(u []string) bool { return slices.Contains(u, "alice") })

		// And narrowed to another cluster: member1 drops her (the change
		// is mapped from the role as it was, too).
		role.Rules[0].ResourceNames = []string{"member2"}
		if err := cp.Update(ctx, role); err != nil {
			t.Fatal(err)
		}
		waitUsers("member1", "alice is no longer impersonable", func(u []string) bool { return !slices.Contains(u, "alice") })

		if err := cp.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-proxy"}}); err != nil {
			t.Fatal(err)
		}
		waitUsers("member2", "alice is no longer impersonable", func(u []string) bool { return !slices.Contains(u, "alice") })
	})

	t.Run("a Work changed or deleted is restored", func(t *testing.T) {
		key := client.ObjectKey{Namespace: names.ExecutionSpace("member1"), Name: unifiedauth.BindingWorkName}
		w := &workv1alpha1.Work{}
		if err := cp.Get(ctx, key, w); err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"karmada-impersonator"},` +
			`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","name":"mallory"}]}`)
		if err := cp.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		controllertest.WaitFor(t, "the binding restored", func(ctx context.Context) (bool, error) {
			b := &rbacv1.ClusterRoleBinding{}
			err := manifestOf(ctx, cp, "member1", unifiedauth.BindingWorkName, b)
			return err == nil && b.RoleRef.Name == "karmada-impersonator", err
		})

		// The finalizer is the execution controller's, which this test
		// does not run: lift it so that the deletion goes through.
		if err := cp.Get(ctx, key, w); err != nil {
			t.Fatal(err)
		}
		uid := w.UID
		w.Finalizers = nil
		if err := cp.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		if err := cp.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		controllertest.WaitFor(t, "the Work made again", func(ctx context.Context) (bool, error) {
			err := cp.Get(ctx, key, w)
			return err == nil && w.UID != uid, client.IgnoreNotFound(err)
		})
	})
}

// manifestOf decodes the object of member's Work name into obj.
func manifestOf(ctx context.Context, c client.Client, member, name string, obj any) error {
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: names.ExecutionSpace(member), Name: name}, w); err != nil {
		return err
	}
	if len(w.Spec.Workload.Manifests) != 1 {
		return fmt.Errorf("Work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
	}
	return json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, obj)
}

func create(ctx context.Context, t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}
