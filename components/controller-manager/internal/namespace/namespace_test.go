package namespace_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/controllertest"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/namespace"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      2,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// start runs the cluster controller, which marks members Ready, and the
// namespace sync controller.
func start(t *testing.T) (*localfed.Federation, *controllertest.Env) {
	t.Helper()
	f := fed.Get(t)
	e := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		err := (&cluster.Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder(cluster.ControllerName),
			Members:   e.Members,
			Informers: e.Informers,
			Health:    cluster.HealthOptions{Period: 500 * time.Millisecond},
		}).SetupWithManager(mgr)
		if err != nil {
			return err
		}
		return (&namespace.Reconciler{Client: mgr.GetClient(), Members: e.Members}).SetupWithManager(mgr)
	})
	return f, e
}

func createNamespace(t *testing.T, c client.Client, name string, labels, annotations map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
}

// inMember waits until the member's namespace satisfies cond; a missing
// namespace is passed as nil.
func inMember(t *testing.T, member *localfed.Cluster, name, what string, cond func(*corev1.Namespace) bool) {
	t.Helper()
	controllertest.WaitFor(t, member.Name+": "+name+" "+what, func(ctx context.Context) (bool, error) {
		var ns corev1.Namespace
		err := member.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
		if apierrors.IsNotFound(err) {
			return cond(nil), nil
		}
		if err != nil {
			return false, err
		}
		return cond(&ns), nil
	})
}

// neverInMember checks for a while that the member has no such namespace.
func neverInMember(t *testing.T, member *localfed.Cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		err := member.Client.Get(t.Context(), client.ObjectKey{Name: name}, &corev1.Namespace{})
		if err == nil {
			t.Errorf("%s: namespace %s was propagated", member.Name, name)
			return
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func managed(ns *corev1.Namespace) bool {
	return ns != nil && ns.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
}

func TestNamespaceLifecycleInMembers(t *testing.T) {
	f, e := start(t)
	ctx := t.Context()

	createNamespace(t, e.Client, "team-a", map[string]string{"team": "a"}, map[string]string{"owner": "alice"})
	for _, m := range f.Members {
		inMember(t, m, "team-a", "propagated", func(ns *corev1.Namespace) bool {
			return managed(ns) && ns.Labels["team"] == "a" && ns.Annotations["owner"] == "alice"
		})
	}

	// Changes follow.
	var cp corev1.Namespace
	if err := e.Client.Get(ctx, client.ObjectKey{Name: "team-a"}, &cp); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cp.DeepCopy())
	cp.Labels["team"] = "b"
	delete(cp.Annotations, "owner")
	if err := e.Client.Patch(ctx, &cp, patch); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Members {
		inMember(t, m, "team-a", "updated", func(ns *corev1.Namespace) bool {
			_, hasOwner := ns.Annotations["owner"]
			return managed(ns) && ns.Labels["team"] == "b" && !hasOwner
		})
	}

	// Deletion follows.
	if err := e.Client.Delete(ctx, &cp); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Members {
		inMember(t, m, "team-a", "deleted", func(ns *corev1.Namespace) bool {
			return ns == nil || !ns.DeletionTimestamp.IsZero()
		})
	}
}

func TestExistingMemberNamespaceIsAdopted(t *testing.T) {
	f, e := start(t)
	member := f.Members[0]
	createNamespace(t, member.Client, "shared", map[string]string{"local": "x"}, nil)
	createNamespace(t, e.Client, "shared", map[string]string{"team": "s"}, nil)
	inMember(t, member, "shared", "adopted", func(ns *corev1.Namespace) bool {
		return managed(ns) && ns.Labels["team"] == "s" && ns.Labels["local"] == "x"
	})
}

func TestSkippedNamespacesStayInTheControlPlane(t *testing.T) {
	f, e := start(t)

	createNamespace(t, e.Client, "opted-out", map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}, nil)
	createNamespace(t, e.Client, "kube-flotilla-test", nil, nil)
	createNamespace(t, e.Client, "karmada-es-not-a-member", nil, nil)
	// Once this one arrived, the others had their turn.
	createNamespace(t, e.Client, "sentinel", nil, nil)
	for _, m := range f.Members {
		inMember(t, m, "sentinel", "propagated", managed)
	}
	for _, m := range f.Members {
		for _, name := range []string{"opted-out", "kube-flotilla-test", "karmada-es-not-a-member", localfed.NamespaceSystem} {
			neverInMember(t, m, name)
		}
		var def corev1.Namespace
		if err := m.Client.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceDefault}, &def); err != nil {
			t.Fatal(err)
		}
		if managed(&def) {
			t.Errorf("%s: the default namespace was taken over", m.Name)
		}
	}
}
