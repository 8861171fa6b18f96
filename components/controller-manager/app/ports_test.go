package app

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"

	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	webhookapp "github.com/flotilla-io/flotilla/components/webhook/app"
	"github.com/flotilla-io/flotilla/internal/controllertest"
)

// TestDefaultProbePortsAreKarmadasAndDistinct: each component's health
// probes default to its Karmada counterpart's port, and the controller-manager
// and the scheduler, run with their defaults on one host against one API
// server, both come up.
func TestDefaultProbePortsAreKarmadasAndDistinct(t *testing.T) {
	defaults := map[string]string{}
	for name, bind := range map[string]func(*flag.FlagSet){
		"controller-manager": func(fs *flag.FlagSet) { (&Options{}).BindFlags(fs) },
		"scheduler":          func(fs *flag.FlagSet) { (&schedapp.Options{}).BindFlags(fs) },
		"webhook":            func(fs *flag.FlagSet) { (&webhookapp.Options{}).BindFlags(fs) },
	} {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		bind(fs)
		defaults[name] = fs.Lookup("health-probe-bind-address").DefValue
	}
	want := map[string]string{"controller-manager": ":10357", "scheduler": ":10351", "webhook": ":8000"}
	for name, addr := range want {
		if defaults[name] != addr {
			t.Errorf("%s --health-probe-bind-address defaults to %q, want Karmada's %q", name, defaults[name], addr)
		}
	}
	if testing.Short() {
		return
	}

	server, err := controllertest.StartAPIServer(controllertest.Scheme(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })
	cmOpts, err := ParseOptions("--metrics-bind-address=0")
	if err != nil {
		t.Fatal(err)
	}
	// Other tests of the package run the controllers in this process too.
	cmOpts.Restartable = true
	schedOpts, err := schedapp.ParseOptions()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- Run(ctx, server.Config, cmOpts, logr.Discard()) }()
	go func() { done <- schedapp.Run(ctx, server.Config, schedOpts, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	})
	for _, addr := range []string{"127.0.0.1:10357", "127.0.0.1:10351"} {
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, controllertest.Eventually, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-done:
				done <- err
				return false, errors.Join(errors.New("a component stopped"), err)
			default:
			}
			code, err := probe(ctx, "http://"+addr+"/readyz")
			return err == nil && code == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("waiting until %s/readyz is ready: %v", addr, err)
		}
	}
	// Both work, not only listen: the scheduler decides on a binding. (It
	// also means every runnable of its manager has started, which a
	// controller-runtime manager waits for when stopped during start-up.)
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ports-configmap"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:      workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "ports"},
			Placement:     &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"absent"}}},
			SchedulerName: policyv1alpha1.DefaultSchedulerName,
		},
	}
	if err := server.Client.Create(t.Context(), rb); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "the scheduler decides on a binding", func(ctx context.Context) (bool, error) {
		if err := server.Client.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, err
		}
		return meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled) != nil, nil
	})
}
