package namespace_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/cluster"
	"github.com/flotilla-io/flotilla/components/controller-manager/internal/namespace"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/lua"
)

var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      2,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// env is a running set of controllers and a control-plane client that
// knows every type the tests write.
type env struct {
	fed *localfed.Federation
	cp  client.Client
}

// start runs the cluster controller (members turn Ready and get their
// execution namespaces), the namespace sync controller with skipped, and
// the execution controller, which applies the Works to the members.
func start(t *testing.T, skipped ...string) *env {
	t.Helper()
	f := fed.Get(t)
	vm := lua.New()
	t.Cleanup(vm.Close)
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	skip := make([]*regexp.Regexp, 0, len(skipped))
	for _, s := range skipped {
		skip = append(skip, regexp.MustCompile(s))
	}
	controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		// The namespace controller reads ClusterOverridePolicies.
		if err := policyv1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
			return err
		}
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
		err = (&execution.Reconciler{
			Client:        mgr.GetClient(),
			Recorder:      mgr.GetEventRecorder(execution.ControllerName),
			Members:       e.Members,
			Interpreter:   interp,
			MemberTimeout: 10 * time.Second,
		}).SetupWithManager(mgr)
		if err != nil {
			return err
		}
		return (&namespace.Reconciler{
			Client:            mgr.GetClient(),
			Recorder:          mgr.GetEventRecorder(namespace.ControllerName),
			SkippedNamespaces: skip,
		}).SetupWithManager(mgr)
	})
	scheme := controllertest.Scheme(t)
	if err := policyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cp, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fed: f, cp: cp}
}

// createNamespace creates a namespace in c, deleted (best effort) when the
// test ends.
func createNamespace(t *testing.T, c client.Client, name string, labels, annotations map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
}

// changeNamespace changes the control plane's namespace with change,
// retrying on conflicts.
func (e *env) changeNamespace(t *testing.T, name string, change func(*corev1.Namespace)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ns corev1.Namespace
		if err := e.cp.Get(t.Context(), client.ObjectKey{Name: name}, &ns); err != nil {
			return err
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		change(&ns)
		return e.cp.Update(t.Context(), &ns)
	})
	if err != nil {
		t.Fatalf("changing namespace %s: %v", name, err)
	}
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

func managed(ns *corev1.Namespace) bool {
	return ns != nil && ns.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue
}

func goneOrGoing(ns *corev1.Namespace) bool {
	return ns == nil || !ns.DeletionTimestamp.IsZero()
}

// workKey is the key of namespace ns's Work for the cluster.
func workKey(clusterName, ns string) client.ObjectKey {
	return client.ObjectKey{Namespace: names.ExecutionSpace(clusterName), Name: names.Work("", ns, "Namespace")}
}

// work waits until namespace ns's Work for the cluster satisfies cond; a
// missing Work is passed as nil.
func (e *env) work(t *testing.T, clusterName, ns, what string, cond func(*workv1alpha1.Work) bool) *workv1alpha1.Work {
	t.Helper()
	var got *workv1alpha1.Work
	controllertest.WaitFor(t, "Work of "+ns+" for "+clusterName+" "+what, func(ctx context.Context) (bool, error) {
		w := &workv1alpha1.Work{}
		err := e.cp.Get(ctx, workKey(clusterName, ns), w)
		if apierrors.IsNotFound(err) {
			got = nil
			return cond(nil), nil
		}
		if err != nil {
			return false, err
		}
		got = w
		return cond(w), nil
	})
	return got
}

func ours(w *workv1alpha1.Work) bool {
	return w != nil && w.DeletionTimestamp.IsZero() && w.Labels[namespace.ManagedByLabel] == namespace.ControllerName
}

func workGone(w *workv1alpha1.Work) bool { return w == nil }

// manifestOf decodes the Work's only manifest.
func manifestOf(t *testing.T, w *workv1alpha1.Work) *corev1.Namespace {
	t.Helper()
	if len(w.Spec.Workload.Manifests) != 1 {
		t.Fatalf("Work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
	}
	var ns corev1.Namespace
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &ns); err != nil {
		t.Fatal(err)
	}
	return &ns
}

// noWorks checks, after the controller has shown it saw the namespaces (a
// later one got its Works), that ns has no Work in any member.
func (e *env) noWorks(t *testing.T, ns string) {
	t.Helper()
	for _, m := range e.fed.MemberNames() {
		err := e.cp.Get(t.Context(), workKey(m, ns), &workv1alpha1.Work{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("Work of %s for %s: want none, got err %v", ns, m, err)
		}
	}
}

func TestNamespaceLifecycleThroughWorks(t *testing.T) {
	e := start(t)
	ctx := t.Context()

	createNamespace(t, e.cp, "team-a", map[string]string{"team": "a"}, map[string]string{"owner": "alice"})
	var cp corev1.Namespace
	if err := e.cp.Get(ctx, client.ObjectKey{Name: "team-a"}, &cp); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.fed.MemberNames() {
		w := e.work(t, m, "team-a", "written", ours)
		if w.Labels[workv1alpha1.WorkPermanentIDLabel] == "" {
			t.Errorf("%s: Work has no permanent id", m)
		}
		if w.Annotations[workv1alpha1.ConflictResolutionAnnotation] != workv1alpha1.ConflictResolutionAbort {
			t.Errorf("%s: Work annotations = %v, want conflict resolution abort", m, w.Annotations)
		}
		if len(w.OwnerReferences) != 1 || w.OwnerReferences[0].UID != cp.UID {
			t.Errorf("%s: Work owners = %+v, want the namespace", m, w.OwnerReferences)
		}
		manifest := manifestOf(t, w)
		if manifest.Name != "team-a" || manifest.UID != "" || manifest.ResourceVersion != "" || len(manifest.Spec.Finalizers) > 0 ||
			manifest.Labels["team"] != "a" || manifest.Labels[corev1.LabelMetadataName] != "" || manifest.Annotations["owner"] != "alice" {
			t.Errorf("%s: manifest = %+v", m, manifest)
		}
	}
	for _, m := range e.fed.Members {
		inMember(t, m, "team-a", "propagated", func(ns *corev1.Namespace) bool {
			return managed(ns) && ns.Labels["team"] == "a" && ns.Annotations["owner"] == "alice"
		})
	}

	// Changes follow, a removed label and annotation included.
	e.changeNamespace(t, "team-a", func(ns *corev1.Namespace) {
		ns.Labels["team"] = "b"
		delete(ns.Annotations, "owner")
	})
	for _, m := range e.fed.Members {
		inMember(t, m, "team-a", "updated", func(ns *corev1.Namespace) bool {
			_, hasOwner := ns.Annotations["owner"]
			return managed(ns) && ns.Labels["team"] == "b" && !hasOwner
		})
	}

	// Deletion follows.
	if err := e.cp.Delete(ctx, &cp); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "team-a", "deleted", workGone)
	}
	for _, m := range e.fed.Members {
		inMember(t, m, "team-a", "deleted", goneOrGoing)
	}
}

// A namespace a member had before is not the control plane's: the Work
// reports the conflict, and deleting the namespace in the control plane
// leaves the member's alone.
func TestMemberOwnNamespaceIsLeftAlone(t *testing.T) {
	e := start(t)
	own, other := e.fed.Members[0], e.fed.Members[1]
	createNamespace(t, own.Client, "shared", map[string]string{"local": "x"}, nil)
	createNamespace(t, e.cp, "shared", map[string]string{"team": "s"}, nil)

	inMember(t, other, "shared", "propagated", func(ns *corev1.Namespace) bool { return managed(ns) && ns.Labels["team"] == "s" })
	e.work(t, own.Name, "shared", "reporting the conflict", func(w *workv1alpha1.Work) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
		return w != nil && c != nil && c.Status == metav1.ConditionFalse && c.Reason == execution.ReasonResourceConflict
	})
	var mine corev1.Namespace
	if err := own.Client.Get(t.Context(), client.ObjectKey{Name: "shared"}, &mine); err != nil {
		t.Fatal(err)
	}
	if managed(&mine) || mine.Labels["team"] != "" {
		t.Errorf("the member's own namespace was taken over: labels %v", mine.Labels)
	}

	if err := e.cp.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "shared", "deleted", workGone)
	}
	inMember(t, other, "shared", "deleted", goneOrGoing)
	inMember(t, own, "shared", "kept", func(ns *corev1.Namespace) bool {
		return ns != nil && ns.DeletionTimestamp.IsZero() && ns.UID == mine.UID && ns.Labels["local"] == "x"
	})
}

func TestSkippedNamespacesStayInTheControlPlane(t *testing.T) {
	e := start(t)

	createNamespace(t, e.cp, "opted-out", map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}, nil)
	createNamespace(t, e.cp, "claimed", map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "some-id"}, nil)
	createNamespace(t, e.cp, "kube-flotilla-test", nil, nil)
	createNamespace(t, e.cp, "karmada-es-not-a-member", nil, nil)
	// Once this one arrived, the others had their turn.
	createNamespace(t, e.cp, "sentinel", nil, nil)
	for _, m := range e.fed.Members {
		inMember(t, m, "sentinel", "propagated", managed)
	}
	for _, ns := range []string{"opted-out", "claimed", "kube-flotilla-test", "karmada-es-not-a-member", localfed.NamespaceSystem, metav1.NamespaceDefault} {
		e.noWorks(t, ns)
	}
	for _, m := range e.fed.Members {
		for _, name := range []string{"opted-out", "claimed", "kube-flotilla-test", "karmada-es-not-a-member", localfed.NamespaceSystem} {
			err := m.Client.Get(t.Context(), client.ObjectKey{Name: name}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s: namespace %s: want not found, got err %v", m.Name, name, err)
			}
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

func TestOptingOutLaterRemovesFromMembers(t *testing.T) {
	e := start(t)
	createNamespace(t, e.cp, "later-out", nil, nil)
	for _, m := range e.fed.Members {
		inMember(t, m, "later-out", "propagated", managed)
	}
	e.changeNamespace(t, "later-out", func(ns *corev1.Namespace) {
		ns.Labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel] = "true"
	})
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "later-out", "deleted", workGone)
	}
	for _, m := range e.fed.Members {
		inMember(t, m, "later-out", "removed", goneOrGoing)
	}

	// Opting in again brings it back.
	e.changeNamespace(t, "later-out", func(ns *corev1.Namespace) {
		delete(ns.Labels, policyv1alpha1.NamespaceSkipAutoPropagationLabel)
	})
	for _, m := range e.fed.Members {
		inMember(t, m, "later-out", "back", func(ns *corev1.Namespace) bool { return managed(ns) && ns.DeletionTimestamp.IsZero() })
	}
}

// A namespace a ClusterPropagationPolicy claims is its binding's: the
// Works are released, not deleted, so the member namespaces stay; when the
// claim ends they are taken back.
func TestClaimedNamespaceIsHandedOver(t *testing.T) {
	e := start(t)
	createNamespace(t, e.cp, "handover", nil, nil)
	ids := map[string]string{}
	for _, m := range e.fed.MemberNames() {
		ids[m] = e.work(t, m, "handover", "written", ours).Labels[workv1alpha1.WorkPermanentIDLabel]
	}
	for _, m := range e.fed.Members {
		inMember(t, m, "handover", "propagated", managed)
	}
	var before corev1.Namespace
	if err := e.fed.Members[0].Client.Get(t.Context(), client.ObjectKey{Name: "handover"}, &before); err != nil {
		t.Fatal(err)
	}

	e.changeNamespace(t, "handover", func(ns *corev1.Namespace) {
		ns.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = "cpp-id"
	})
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "handover", "released", func(w *workv1alpha1.Work) bool {
			return w != nil && w.DeletionTimestamp.IsZero() && w.Labels[namespace.ManagedByLabel] == "" &&
				w.Labels[workv1alpha1.WorkPermanentIDLabel] == ids[m]
		})
	}
	inMember(t, e.fed.Members[0], "handover", "kept", func(ns *corev1.Namespace) bool {
		return ns != nil && ns.UID == before.UID && ns.DeletionTimestamp.IsZero()
	})

	e.changeNamespace(t, "handover", func(ns *corev1.Namespace) {
		delete(ns.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
	})
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "handover", "taken back", func(w *workv1alpha1.Work) bool {
			return ours(w) && w.Labels[workv1alpha1.WorkPermanentIDLabel] == ids[m]
		})
	}
	inMember(t, e.fed.Members[0], "handover", "still the same", func(ns *corev1.Namespace) bool {
		return ns != nil && ns.UID == before.UID && ns.DeletionTimestamp.IsZero()
	})
}

// Works left by an earlier run are judged again: those of a namespace that
// now matches the skip list or no longer exists, or of a cluster that is
// gone, are deleted.
func TestEarlierWorksThatAreNotWantedAreDeleted(t *testing.T) {
	f := fed.Get(t)
	scheme := controllertest.Scheme(t)
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	createNamespace(t, c, "legacy-app", nil, nil)
	createNamespace(t, c, "kept-app", nil, nil)
	createNamespace(t, c, names.ExecutionSpace("ghost"), nil, nil)
	earlier := func(clusterName, ns string) {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
			Namespace: names.ExecutionSpace(clusterName), Name: names.Work("", ns, "Namespace"),
			Labels: map[string]string{namespace.ManagedByLabel: namespace.ControllerName},
		}}
		raw, err := json.Marshal(&corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns},
		})
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatalf("creating Work %s/%s: %v", w.Namespace, w.Name, err)
		}
	}
	member := f.MemberNames()[0]
	// The cluster controller makes it when it first runs, maybe not yet.
	space := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   names.ExecutionSpace(member),
		Labels: map[string]string{workv1alpha1.KarmadaSystemLabel: workv1alpha1.KarmadaSystemLabelValue},
	}}
	if err := c.Create(ctx, space); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	earlier(member, "legacy-app")
	earlier("ghost", "kept-app")
	earlier(member, "never-was")

	e := start(t, `^legacy-.*$`)
	e.work(t, member, "legacy-app", "deleted", workGone)
	e.work(t, member, "never-was", "deleted", workGone)
	e.work(t, "ghost", "kept-app", "deleted", workGone)
	e.work(t, member, "kept-app", "written", ours)
	inMember(t, f.Members[0], "legacy-app", "absent", goneOrGoing)
}

// A Cluster that joins gets every namespace; its Works go with it.
func TestNewClusterGetsEveryNamespace(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	createNamespace(t, e.cp, "early", nil, nil)
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "early", "written", ours)
	}

	// Never reachable, so never Ready: its Works wait, and are released
	// without cleanup when it leaves.
	late := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://127.0.0.1:1",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: localfed.NamespaceCluster, Name: "late"},
		},
	}
	if err := e.cp.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cp.Delete(context.Background(), late)
		controllertest.WaitFor(t, "Cluster late gone", func(ctx context.Context) (bool, error) {
			err := e.cp.Get(ctx, client.ObjectKeyFromObject(late), &clusterv1alpha1.Cluster{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
	e.work(t, "late", "early", "written", ours)
	createNamespace(t, e.cp, "later", nil, nil)
	e.work(t, "late", "later", "written", ours)

	if err := e.cp.Delete(ctx, late); err != nil {
		t.Fatal(err)
	}
	e.work(t, "late", "early", "gone with the cluster", workGone)
	controllertest.WaitFor(t, "Cluster late gone", func(ctx context.Context) (bool, error) {
		err := e.cp.Get(ctx, client.ObjectKeyFromObject(late), &clusterv1alpha1.Cluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	for _, m := range e.fed.MemberNames() {
		e.work(t, m, "early", "kept", ours)
	}
}

// ClusterOverridePolicies selecting a namespace apply per cluster; one that
// fails is reported on the namespace and changes nothing.
func TestClusterOverridePolicies(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	first, second := e.fed.Members[0], e.fed.Members[1]

	createNamespace(t, e.cp, "styled", map[string]string{"team": "s"}, nil)
	for _, m := range e.fed.Members {
		inMember(t, m, "styled", "propagated", managed)
	}
	cop := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "styled-region"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "styled"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{first.Name}},
				Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
					Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"region": "north"},
				}}},
			}},
		},
	}
	if err := e.cp.Create(ctx, cop); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.cp.Delete(context.Background(), cop) })
	inMember(t, first, "styled", "overridden", func(ns *corev1.Namespace) bool {
		return managed(ns) && ns.Labels["region"] == "north" && ns.Labels["team"] == "s"
	})
	w := e.work(t, first.Name, "styled", "recording the override", func(w *workv1alpha1.Work) bool {
		return ours(w) && w.Annotations[policyv1alpha1.AppliedClusterOverrides] != ""
	})
	if got := manifestOf(t, w).Labels["region"]; got != "north" {
		t.Errorf("manifest region = %q", got)
	}
	if w := e.work(t, second.Name, "styled", "written", ours); manifestOf(t, w).Labels["region"] != "" {
		t.Errorf("%s got the override meant for %s", second.Name, first.Name)
	}
	controllertest.WaitFor(t, "ApplyOverridePolicySucceed on styled", func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, e.cp, "styled", "ApplyOverridePolicySucceed")
	})

	// A policy that cannot apply leaves the Works as they were.
	createNamespace(t, e.cp, "styled-broken", nil, nil)
	before := e.work(t, first.Name, "styled-broken", "written", ours)
	broken := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "styled-broken"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "styled-broken"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/spec/nothing/here", Operator: policyv1alpha1.OverriderOpRemove,
				}}},
			}},
		},
	}
	if err := e.cp.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.cp.Delete(context.Background(), broken) })
	controllertest.WaitFor(t, "ApplyOverridePolicyFailed on styled-broken", func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, e.cp, "styled-broken", "ApplyOverridePolicyFailed")
	})
	after := e.work(t, first.Name, "styled-broken", "still there", ours)
	if after.Generation != before.Generation {
		t.Errorf("the Work was rewritten: generation %d, was %d", after.Generation, before.Generation)
	}

	// Without the policy, the member loses what it added.
	if err := e.cp.Delete(ctx, cop); err != nil {
		t.Fatal(err)
	}
	inMember(t, first, "styled", "no longer overridden", func(ns *corev1.Namespace) bool {
		_, has := ns.Labels["region"]
		return managed(ns) && !has
	})
	e.work(t, first.Name, "styled", "without the record", func(w *workv1alpha1.Work) bool {
		_, has := w.Annotations[policyv1alpha1.AppliedClusterOverrides]
		return ours(w) && !has
	})
}
