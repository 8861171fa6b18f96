package execution_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/execution"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/names"
	"github.com/flotilla-io/flotilla/internal/workstatus"
	"github.com/flotilla-io/flotilla/lua"
)

// BenchmarkApplyDeployments measures Works applied per second: each
// iteration creates FLOTILLA_BENCH_WORKS (default 500) Works per member,
// each with a Deployment of 0 replicas (so that the members' schedulers
// stay out of it), and waits until every one is Applied. Member clients
// are not throttled, so that the controllers, not the client rate limit,
// are measured:
//
//	go test ./internal/execution/ -run '^$' -bench ApplyDeployments -benchtime 1x
func BenchmarkApplyDeployments(b *testing.B) {
	perMember := 500
	if v, err := strconv.Atoi(os.Getenv("FLOTILLA_BENCH_WORKS")); err == nil && v > 0 {
		perMember = v
	}
	f := fed.Get(b)
	vm := lua.New()
	b.Cleanup(vm.Close)
	interp, err := interpreter.NewStatic(vm, nil)
	if err != nil {
		b.Fatal(err)
	}
	scheme := controllertest.Scheme(b)
	mgr, err := ctrl.NewManager(f.ControlPlane.Config, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	members := membercluster.NewClientCache(mgr.GetClient(), scheme, membercluster.Options{QPS: 5000, Burst: 10000})
	informers := membercluster.NewInformerManager(members, logr.Discard())
	if err := mgr.Add(informers); err != nil {
		b.Fatal(err)
	}
	reapply := make(chan event.GenericEvent, 1024)
	if err := (&execution.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(execution.ControllerName),
		Members: members, Informers: informers, Interpreter: interp, Reapply: reapply,
	}).SetupWithManager(mgr); err != nil {
		b.Fatal(err)
	}
	if err := (&workstatus.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(workstatus.ControllerName),
		Members: members, Informers: informers, Interpreter: interp, Reapply: reapply,
	}).SetupWithManager(mgr); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("manager: %v", err)
		}
	})
	cp, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	e := &env{fed: f, cp: cp}
	ns := "bench"
	for _, m := range f.MemberNames() {
		e.makeReady(b, m)
	}
	e.memberNamespace(b, ns)

	for i := 0; i < b.N; i++ {
		works := make([]*workv1alpha1.Work, 0, perMember*len(f.MemberNames()))
		for _, m := range f.MemberNames() {
			for j := range perMember {
				name := fmt.Sprintf("bench-%d-%d", i, j)
				works = append(works, newWork(b, m, name, nginx(ns, name, 0)))
			}
		}
		began := time.Now()
		createAll(b, e.cp, works)
		waitApplied(b, e.cp, f.MemberNames(), len(works))
		elapsed := time.Since(began)
		b.ReportMetric(float64(len(works))/elapsed.Seconds(), "works/s")
		b.ReportMetric(elapsed.Seconds(), "s/batch")
		for _, c := range []string{execution.ControllerName, workstatus.ControllerName} {
			n, mean := reconcileStats(b, c)
			b.Logf("%s: %d reconciles, mean %.3fs", c, n, mean)
		}
		b.StopTimer()
		deleteAll(b, e.cp, works)
		b.StartTimer()
	}
}

func createAll(b *testing.B, c client.Client, works []*workv1alpha1.Work) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, w := range works {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := c.Create(context.Background(), w); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

func waitApplied(b *testing.B, c client.Client, members []string, want int) {
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		applied := 0
		for _, m := range members {
			var list workv1alpha1.WorkList
			if err := c.List(ctx, &list, client.InNamespace(names.ExecutionSpace(m))); err != nil {
				return false, nil
			}
			for i := range list.Items {
				if meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, workv1alpha1.WorkApplied) {
					applied++
				}
			}
		}
		return applied >= want, nil
	})
	if err != nil {
		b.Fatalf("waiting for %d Works to be applied: %v", want, err)
	}
}

func deleteAll(b *testing.B, c client.Client, works []*workv1alpha1.Work) {
	for _, m := range []string{"member1", "member2"} {
		if err := c.DeleteAllOf(context.Background(), &workv1alpha1.Work{}, client.InNamespace(names.ExecutionSpace(m))); err != nil {
			b.Error(err)
		}
	}
	_ = wait.PollUntilContextTimeout(context.Background(), time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("WorkList"))
		if err := c.List(ctx, &list); err != nil {
			return false, nil
		}
		return len(list.Items) == 0, nil
	})
	_ = works
}

// reconcileStats reads controller-runtime's reconcile-time histogram of a
// controller: how many reconciles, and their mean duration.
func reconcileStats(b *testing.B, controllerName string) (uint64, float64) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controllerName {
					h := m.GetHistogram()
					if h.GetSampleCount() == 0 {
						return 0, 0
					}
					return h.GetSampleCount(), h.GetSampleSum() / float64(h.GetSampleCount())
				}
			}
		}
	}
	return 0, 0
}
