package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
)

func TestPluginsFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
		err  string
	}{
		{nil, "*", ""},
		{[]string{"--plugins=*,-WorkloadAffinity"}, "*,-WorkloadAffinity", ""},
		{[]string{"--plugins", "TaintToleration,ClusterAffinity"}, "TaintToleration,ClusterAffinity", ""},
		{[]string{"--plugins=*,-Nope"}, "", `invalid value "*,-Nope" for flag -plugins: unknown plugin "Nope"`},
		{[]string{"--plugins=WorkloadAfinity"}, "", `invalid value "WorkloadAfinity" for flag -plugins: unknown plugin "WorkloadAfinity"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := ParseOptions(tc.args...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.plugins.String(); got != tc.want {
				t.Errorf("plugins %q, want %q", got, tc.want)
			}
		})
	}
}

// Two schedulers on one API server, one with --plugins=*,-TaintToleration:
// it places a binding on a cluster whose taint the binding does not
// tolerate, which the one with the default plugins refuses.
func TestDisabledPluginIsNotApplied(t *testing.T) {
	// envtest logs through controller-runtime's logger, which complains
	// when unset.
	ctrllog.SetLogger(logr.Discard())
	root := filepath.Join("..", "..", "..")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "bin", "k8s", "v1.37.2"))
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make([]chan error, 0, 2)
	for name, plugins := range map[string]string{"with-taints": "*", "without-taints": "*,-TaintToleration"} {
		opts, err := ParseOptions("--scheduler-name="+name, "--plugins="+plugins, "--metrics-bind-address=0", "--health-probe-bind-address=0")
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() { ch <- Run(ctx, cfg, opts, logr.Discard()) }()
		done = append(done, ch)
	}
	t.Cleanup(func() {
		cancel()
		for _, ch := range done {
			if err := <-ch; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	})

	cluster := fixture.Cluster("tainted").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule).Obj()
	status := cluster.Status
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Status = status
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	refused := fixture.Binding("refused").SchedulerName("with-taints").Obj()
	placed := fixture.Binding("placed").SchedulerName("without-taints").Obj()
	for _, rb := range []*workv1alpha2.ResourceBinding{refused, placed} {
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}

	decided := func(rb *workv1alpha2.ResourceBinding) *metav1.Condition {
		t.Helper()
		var cond *metav1.Condition
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return false, err
			}
			cond = meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
			return cond != nil, nil
		})
		if err != nil {
			t.Fatalf("waiting for a decision on %s: %v", rb.Name, err)
		}
		return cond
	}
	if cond := decided(placed); cond.Status != metav1.ConditionTrue || len(placed.Spec.Clusters) != 1 || placed.Spec.Clusters[0].Name != "tainted" {
		t.Errorf("without TaintToleration: %s %s %q on %v", cond.Status, cond.Reason, cond.Message, placed.Spec.Clusters)
	}
	if cond := decided(refused); cond.Reason != workv1alpha2.BindingReasonNoClusterFit || !strings.Contains(cond.Message, "had untolerated taint {dedicated: gpu}") {
		t.Errorf("with TaintToleration: %s %s %q", cond.Status, cond.Reason, cond.Message)
	}
}
