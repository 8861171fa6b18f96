package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workstatus"
	"github.com/flotilla-io/flotilla/lua"
)

// One federation with two members for the package.
var fed = &localfedtest.Shared{Options: localfed.Options{
	Members:      2,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// env is what a test needs: the federation, a control-plane client and the
// running controllers.
type env struct {
	fed *localfed.Federation
	cp  client.Client
	ctl *controllertest.Env
}

// start runs the execution and work-status controllers, wired as
// cmd/main.go wires them, in a manager of their own until the test ends.
// The cluster controller does not run: the members are marked Ready and
// their execution namespaces created here.
func start(t *testing.T) *env {
	t.Helper()
	f := fed.Get(t)
	vm := lua.New()
	t.Cleanup(vm.Close)
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctl := controllertest.Start(t, f.ControlPlane.Config, func(mgr ctrl.Manager, e *controllertest.Env) error {
		reapply := make(chan event.GenericEvent, 64)
		if err := (&execution.Reconciler{
			Client:      mgr.GetClient(),
			Recorder:    mgr.GetEventRecorder(execution.ControllerName),
			Members:     e.Members,
			Informers:   e.Informers,
			Interpreter: interp,
			Reapply:     reapply,
			// Short, so that an unreachable member fails fast.
			MemberTimeout: 5 * time.Second,
		}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&workstatus.Reconciler{
			Client:      mgr.GetClient(),
			Recorder:    mgr.GetEventRecorder(workstatus.ControllerName),
			Members:     e.Members,
			Informers:   e.Informers,
			Interpreter: interp,
			Reapply:     reapply,
		}).SetupWithManager(mgr)
	})
	e := &env{fed: f, cp: ctl.Client, ctl: ctl}
	for _, m := range f.MemberNames() {
		e.makeReady(t, m)
	}
	return e
}

// makeReady gives a Cluster the Ready condition and its execution
// namespace, as the cluster controller would.
func (e *env) makeReady(t testing.TB, cluster string) {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionSpace(cluster)}}
	if err := e.cp.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var c clusterv1alpha1.Cluster
	if err := e.cp.Get(ctx, client.ObjectKey{Name: cluster}, &c); err != nil {
		t.Fatal(err)
	}
	if execution.IsReady(&c) {
		return
	}
	base := c.DeepCopy()
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: clusterv1alpha1.ClusterReasonReady, Message: "set by the test",
	})
	if err := e.cp.Status().Patch(ctx, &c, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// member is the client of a member cluster.
func (e *env) member(name string) client.Client { return e.fed.Member(name).Client }

// memberNamespace creates a namespace of the test's own in every member.
func (e *env) memberNamespace(t testing.TB, name string) string {
	t.Helper()
	for _, m := range e.fed.Members {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := m.Client.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return name
}

// newWork is a Work for cluster carrying objs as manifests.
func newWork(t testing.TB, cluster, name string, objs ...client.Object) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionSpace(cluster), Name: name}}
	setManifests(t, w, objs...)
	return w
}

func setManifests(t testing.TB, w *workv1alpha1.Work, objs ...client.Object) {
	t.Helper()
	w.Spec.Workload.Manifests = nil
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
}

// create creates the Work in the control plane. When the test ends it is
// deleted, while the controllers still run to release it, so that no Work
// is left to the next test.
func (e *env) create(t *testing.T, w *workv1alpha1.Work) {
	t.Helper()
	if err := e.cp.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := e.cp.Delete(ctx, w); err != nil {
			return
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := e.cp.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Logf("Work %s/%s still there after the test", w.Namespace, w.Name)
		}
	})
}

// updateWork changes the Work with change, retrying on conflict.
func (e *env) updateWork(t *testing.T, key client.ObjectKey, change func(*workv1alpha1.Work)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, controllertest.Eventually, true, func(ctx context.Context) (bool, error) {
		var w workv1alpha1.Work
		if err := e.cp.Get(ctx, key, &w); err != nil {
			return false, err
		}
		change(&w)
		if err := e.cp.Update(ctx, &w); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("updating Work %s: %v", key, err)
	}
}

func (e *env) getWork(ctx context.Context, key client.ObjectKey) (*workv1alpha1.Work, error) {
	var w workv1alpha1.Work
	err := e.cp.Get(ctx, key, &w)
	return &w, err
}

// conditionIs waits until the Work's condition has status and reason, and
// returns the Work.
func (e *env) conditionIs(t *testing.T, key client.ObjectKey, condType string, status metav1.ConditionStatus, reason string) *workv1alpha1.Work {
	t.Helper()
	var got *workv1alpha1.Work
	var last string
	controllertest.WaitFor(t, fmt.Sprintf("Work %s %s=%s (%s)", key, condType, status, reason), func(ctx context.Context) (bool, error) {
		w, err := e.getWork(ctx, key)
		if err != nil {
			return false, err
		}
		got = w
		c := meta.FindStatusCondition(w.Status.Conditions, condType)
		if c == nil {
			return false, nil
		}
		last = fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		if c.Status == status && c.Reason == reason && c.ObservedGeneration == w.Generation {
			return true, nil
		}
		return false, fmt.Errorf("condition is %s", last)
	})
	return got
}

// hasEvent waits for an event with reason on the named object.
func (e *env) hasEvent(t *testing.T, name, reason string) {
	t.Helper()
	controllertest.WaitFor(t, fmt.Sprintf("event %s on %s", reason, name), func(ctx context.Context) (bool, error) {
		return controllertest.HasEvent(ctx, e.cp, name, reason)
	})
}

// eventMessages lists the notes of events with reason on the named object.
func (e *env) eventMessages(ctx context.Context, name, reason string) ([]string, error) {
	var list corev1.EventList
	if err := e.cp.List(ctx, &list); err != nil {
		return nil, err
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev.Message)
		}
	}
	return out, nil
}

// gone waits until get reports NotFound.
func gone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	controllertest.WaitFor(t, what+" gone", func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// hostPort strips the scheme of an endpoint URL.
func hostPort(endpoint string) string { return strings.TrimPrefix(endpoint, "https://") }
