package operator

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/release"
)

var benchInstances = flag.Int("bench.instances", 20, "Karmada instances the operator benchmark creates at once.")

// BenchmarkKarmadaReady runs the operator binary as its own process against
// the e2e host, creates -bench.instances Karmadas at once and waits until
// all are Ready, each a real control plane of five pods on the node agent.
// It reports the time from creation to Ready (first, p50, last) and the
// operator's CPU time and peak RSS for the whole run.
//
//	go test ./test/e2e/operator -run '^$' -bench KarmadaReady -benchtime 1x -timeout 60m -args -bench.instances=20
func BenchmarkKarmadaReady(b *testing.B) {
	ctx := context.Background()
	ensureInotifyInstances(b, 16**benchInstances+128)
	bin := filepath.Join(b.TempDir(), release.Operator.Binary())
	build := exec.Command("go", "build", "-o", bin, "./operator/cmd")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the operator: %v\n%s", err, out)
	}
	for i := 0; i < b.N; i++ {
		ns := fmt.Sprintf("bench-%d-%d", time.Now().Unix(), i)
		if err := fed.Host.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		logFile, err := os.Create(filepath.Join(b.TempDir(), "operator.log"))
		if err != nil {
			b.Fatal(err)
		}
		// The operator reaches each API server at its Service's ClusterIP,
		// which the host's loopback Service range keeps on this machine.
		cmd := exec.Command(bin, "--kubeconfig", fed.KubeconfigPath, "--watch-namespace", ns,
			"--metrics-bind-address=0", "--health-probe-bind-address=0", "--concurrent-karmada-syncs=4")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		proc, err := procfs.NewProc(cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}

		began := time.Now()
		for j := 0; j < *benchInstances; j++ {
			k := &operatorv1alpha1.Karmada{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("k%02d", j)},
				Spec: operatorv1alpha1.KarmadaSpec{Components: &operatorv1alpha1.KarmadaComponents{
					Etcd: &operatorv1alpha1.Etcd{Local: &operatorv1alpha1.LocalEtcd{}},
				}},
			}
			if err := fed.Host.Client.Create(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
		ready, err := waitAllReady(ctx, ns, *benchInstances, began)
		elapsed := time.Since(began)
		stat, serr := proc.Stat()
		status, perr := proc.NewStatus()
		if err == nil && serr == nil && perr == nil {
			// Tear the instances down while the operator runs: its
			// finalizer removes each control plane.
			err = deleteNamespace(ctx, ns)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if err != nil {
			b.Fatalf("%v (operator log: %s)", err, logFile.Name())
		}
		if serr != nil || perr != nil {
			b.Fatal(serr, perr)
		}
		slices.Sort(ready)
		cpu := stat.CPUTime()
		b.ReportMetric(ready[0].Seconds(), "s-first-ready")
		b.ReportMetric(ready[len(ready)/2].Seconds(), "s-p50-ready")
		b.ReportMetric(ready[len(ready)-1].Seconds(), "s-all-ready")
		b.ReportMetric(cpu, "operator-cpu-s")
		b.ReportMetric(float64(status.VmHWM)/(1<<20), "operator-peak-MiB")
		b.Logf("%d instances: first Ready after %s, p50 %s, all after %s; operator CPU %.1fs, peak RSS %d MiB",
			len(ready), ready[0].Round(time.Second), ready[len(ready)/2].Round(time.Second), elapsed.Round(time.Second), cpu, status.VmHWM>>20)
	}
}

func deleteNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := fed.Host.Client.Delete(ctx, ns); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := fed.Host.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		return apierrors.IsNotFound(err), nil
	})
}

// waitAllReady returns, per instance, the time from began to its first Ready.
func waitAllReady(ctx context.Context, ns string, n int, began time.Time) ([]time.Duration, error) {
	var mu sync.Mutex
	seen := map[string]time.Duration{}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 45*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &operatorv1alpha1.KarmadaList{}
		if err := fed.Host.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range list.Items {
			if _, ok := seen[k.Name]; !ok && meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1alpha1.ConditionReady) {
				seen[k.Name] = time.Since(began)
			}
		}
		return len(seen) == n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%d of %d instances Ready: %w", len(seen), n, err)
	}
	out := make([]time.Duration, 0, n)
	for _, d := range seen {
		out = append(out, d)
	}
	return out, nil
}

// inotifyInstances is the kernel's limit of inotify instances per user.
const inotifyInstances = "/proc/sys/fs/inotify/max_user_instances"

// ensureInotifyInstances raises the per-user inotify limit to at least n
// for the benchmark, and puts it back afterwards. Every process of a control
// plane that reloads certificates holds a few inotify instances, and all the
// node agent's processes run as one user: the kernel's default of 128 runs
// out at about 15 control planes on one node, and the webhooks then fail to
// start with "too many open files". Nodes that run many such pods raise it
// the same way.
func ensureInotifyInstances(b *testing.B, n int) {
	b.Helper()
	data, err := os.ReadFile(inotifyInstances)
	if err != nil {
		b.Logf("cannot read %s (%v); leaving it", inotifyInstances, err)
		return
	}
	var have int
	if _, err := fmt.Sscanf(string(data), "%d", &have); err != nil || have >= n {
		return
	}
	if err := os.WriteFile(inotifyInstances, []byte(fmt.Sprint(n)), 0o644); err != nil {
		b.Fatalf("%s is %d, fewer than the %d this benchmark needs, and raising it failed (%v): run `sysctl fs.inotify.max_user_instances=%d` as root", inotifyInstances, have, n, err, n)
	}
	b.Logf("raised %s from %d to %d for the benchmark", inotifyInstances, have, n)
	b.Cleanup(func() { _ = os.WriteFile(inotifyInstances, data, 0o644) })
}
