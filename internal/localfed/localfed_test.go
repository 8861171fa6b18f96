package localfed_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

var fed = &localfedtest.Shared{Options: localfed.Options{Members: 2}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// eventually is how long a test waits for controllers to act.
const eventually = time.Minute

func TestMembersAreRegistered(t *testing.T) {
	f := fed.Get(t)
	t.Logf("Start with 1+%d clusters took %s", len(f.Members), f.StartupTime.Round(time.Millisecond))
	ctx := t.Context()

	var clusters clusterv1alpha1.ClusterList
	if err := f.ControlPlane.Client.List(ctx, &clusters); err != nil {
		t.Fatalf("listing Clusters: %v", err)
	}
	names := make([]string, 0, len(clusters.Items))
	for _, c := range clusters.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if want := []string{"member1", "member2"}; !slices.Equal(names, want) {
		t.Fatalf("Clusters = %v, want %v", names, want)
	}

	for _, c := range clusters.Items {
		t.Run(c.Name, func(t *testing.T) {
			member := f.Member(c.Name)
			if c.Spec.SyncMode != clusterv1alpha1.Push {
				t.Errorf("syncMode = %q, want Push", c.Spec.SyncMode)
			}
			if c.Spec.APIEndpoint != member.Endpoint || !strings.HasPrefix(c.Spec.APIEndpoint, "https://127.0.0.1:") {
				t.Errorf("apiEndpoint = %q, want %q", c.Spec.APIEndpoint, member.Endpoint)
			}
			if c.Spec.SecretRef == nil || c.Spec.SecretRef.Namespace != localfed.NamespaceCluster || c.Spec.SecretRef.Name != c.Name {
				t.Fatalf("secretRef = %+v, want %s/%s", c.Spec.SecretRef, localfed.NamespaceCluster, c.Name)
			}
			var secret corev1.Secret
			key := client.ObjectKey{Namespace: c.Spec.SecretRef.Namespace, Name: c.Spec.SecretRef.Name}
			if err := f.ControlPlane.Client.Get(ctx, key, &secret); err != nil {
				t.Fatalf("getting Secret: %v", err)
			}
			token, ca := secret.Data[clusterv1alpha1.SecretTokenKey], secret.Data[clusterv1alpha1.SecretCADataKey]
			if len(token) == 0 || len(ca) == 0 {
				t.Fatalf("Secret keys = %v, want token and caBundle set", slices.Sorted(maps.Keys(secret.Data)))
			}

			// The credentials alone, as the control plane will use them.
			cfg := &rest.Config{Host: c.Spec.APIEndpoint, BearerToken: string(token), TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("listing nodes with the Secret's credentials: %v", err)
			}
			if len(nodes.Items) != 3 {
				t.Errorf("nodes = %d, want 3", len(nodes.Items))
			}
			for _, n := range nodes.Items {
				if n.Spec.Unschedulable || !nodeReady(&n) {
					t.Errorf("node %s: unschedulable=%v ready=%v", n.Name, n.Spec.Unschedulable, nodeReady(&n))
				}
			}
		})
	}
}

func TestKubeconfigHasAContextPerCluster(t *testing.T) {
	f := fed.Get(t)
	cfg, err := clientcmd.LoadFromFile(f.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != localfed.ControlPlaneName {
		t.Errorf("current context = %q, want %q", cfg.CurrentContext, localfed.ControlPlaneName)
	}
	for _, name := range []string{localfed.ControlPlaneName, "member1", "member2"} {
		t.Run(name, func(t *testing.T) {
			restCfg, err := clientcmd.NewNonInteractiveClientConfig(*cfg, name, nil, nil).ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			cs, err := kubernetes.NewForConfig(restCfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().Namespaces().Get(t.Context(), metav1.NamespaceDefault, metav1.GetOptions{}); err != nil {
				t.Errorf("context %s: %v", name, err)
			}
		})
	}
}

func TestMemberRunsADeployment(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	c := f.Member("member1").Client
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "web",
					Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"),
					}},
				}}},
			},
		},
	}
	if err := c.Create(ctx, deploy); err != nil {
		t.Fatalf("creating Deployment: %v", err)
	}
	began := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil {
			return false, err
		}
		return deploy.Status.AvailableReplicas == 3, nil
	})
	if err != nil {
		t.Fatalf("Deployment never had 3 available replicas (status %+v): %v", deploy.Status, err)
	}
	t.Logf("Deployment 3/3 Available after %s", time.Since(began).Round(time.Millisecond))

	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(deploy.Namespace), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Spec.NodeName == "" {
			t.Errorf("pod %s: phase %s, IP %q, node %q", p.Name, p.Status.Phase, p.Status.PodIP, p.Spec.NodeName)
		}
	}
}

func TestControlPlaneDeletesNamespaces(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	c := f.ControlPlane.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "content"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, ns)
}

func TestControlPlaneCollectsGarbage(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	c := f.ControlPlane.Client
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "owner"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: metav1.NamespaceDefault,
		Name:      "dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if err := c.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, dependent)
}

// TestMemberStopsAndStartsAgain stops a member whole and starts it again:
// in between it is unreachable; after, it serves the objects it had at the
// same endpoint, to the credentials of its Cluster registration.
func TestMemberStopsAndStartsAgain(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	member := f.Member("member2")
	endpoint := member.Endpoint
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "survivor"},
		Data:       map[string]string{"key": "value"},
	}
	if err := member.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	pidsBefore := f.PIDs()

	if err := f.StopMember(ctx, member.Name); err != nil {
		t.Fatalf("StopMember: %v", err)
	}
	err := member.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	if err == nil || apierrors.ReasonForError(err) != metav1.StatusReasonUnknown {
		t.Errorf("reading from the stopped member: %v, want a connection error", err)
	}
	if err := f.StopMember(ctx, member.Name); err != nil {
		t.Errorf("StopMember of a stopped member: %v, want nothing done", err)
	}
	// The other member and the control plane run on.
	if err := f.Member("member1").Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceDefault}, &corev1.Namespace{}); err != nil {
		t.Errorf("member1 while member2 is stopped: %v", err)
	}

	if err := f.StartMember(ctx, member.Name); err != nil {
		t.Fatalf("StartMember: %v", err)
	}
	if member.Endpoint != endpoint {
		t.Errorf("endpoint after restart = %s, want %s", member.Endpoint, endpoint)
	}
	var got corev1.ConfigMap
	if err := member.Client.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("reading the ConfigMap after restart: %v", err)
	}
	if got.Data["key"] != "value" {
		t.Errorf("ConfigMap data after restart = %v", got.Data)
	}
	if err := f.StartMember(ctx, member.Name); err != nil {
		t.Errorf("StartMember of a running member: %v, want nothing done", err)
	}

	// The registration's token and CA bundle still reach it.
	var secret corev1.Secret
	if err := f.ControlPlane.Client.Get(ctx, client.ObjectKey{Namespace: localfed.NamespaceCluster, Name: member.Name}, &secret); err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: endpoint, BearerToken: string(secret.Data[clusterv1alpha1.SecretTokenKey]),
		TLSClientConfig: rest.TLSClientConfig{CAData: secret.Data[clusterv1alpha1.SecretCADataKey]}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("reading with the Cluster's credentials after restart: %v", err)
	}

	// The stopped processes are gone; new ones replaced them.
	pidsAfter := f.PIDs()
	if len(pidsAfter) <= len(pidsBefore) {
		t.Errorf("processes after restart = %d, before = %d; want new ones", len(pidsAfter), len(pidsBefore))
	}
	for _, pid := range pidsAfter {
		if slices.Contains(pidsBefore, pid) {
			continue
		}
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("restarted process %d: %v", pid, err)
		}
	}

	for _, name := range []string{"", "member9"} {
		if err := f.StopMember(ctx, name); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("StopMember(%q) = %v, want an error naming it", name, err)
		}
		if err := f.StartMember(ctx, name); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("StartMember(%q) = %v, want an error naming it", name, err)
		}
	}
}

// TestClose stops the shared federation, so it must stay the last test of
// this file; Main's Close after it does nothing.
func TestClose(t *testing.T) {
	f := fed.Get(t)
	pids, ports := f.PIDs(), f.Ports()
	// etcd, the control plane's API server and controller manager, and four
	// processes per member; more only if a start lost a port race.
	if want := 1 + 2 + 4*len(f.Members); len(pids) < want {
		t.Errorf("started %d processes, want at least %d: %v", len(pids), want, pids)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Close (kill -0: %v)", pid, err)
		}
	}
	for _, port := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d not free after Close: %v", port, err)
			continue
		}
		_ = l.Close()
	}
}

// BenchmarkStart measures Start and Close of a control plane with 3 members,
// the memory the federation holds once started, and the CPU time its
// processes took to get there, which on a busy machine says more than the
// wall time.
func BenchmarkStart(b *testing.B) {
	ctx := log.IntoContext(b.Context(), testr.NewWithInterface(b, testr.Options{}))
	for b.Loop() {
		dir := b.TempDir()
		f, err := localfed.Start(ctx, localfed.Options{Members: 3, WorkDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(f.StartupTime.Seconds(), "start-s")
		rss, cpu := procUsage(b, f.PIDs())
		b.ReportMetric(float64(rss)/1024, "rss-MiB")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.StartTimer()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

// procUsage sums the resident set sizes (KiB) and the user and system CPU
// time of pids, from /proc.
func procUsage(b *testing.B, pids []int) (rssKiB int, cpu time.Duration) {
	const clockTicks = 100 // USER_HZ, 100 on every Linux architecture Go supports
	for _, pid := range pids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			b.Logf("reading status of %d: %v", pid, err)
			continue
		}
		for line := range strings.Lines(string(status)) {
			if value, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
				if err == nil {
					rssKiB += kib
				}
			}
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may hold
		// spaces: state is the first, utime the 12th and stime the 13th.
		_, after, _ := strings.Cut(string(stat), ") ")
		fields := strings.Fields(after)
		if len(fields) > 12 {
			utime, _ := strconv.Atoi(fields[11])
			stime, _ := strconv.Atoi(fields[12])
			cpu += time.Duration(utime+stime) * time.Second / clockTicks
		}
	}
	return rssKiB, cpu
}

func waitGone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("%T %s still there: %v", obj, obj.GetName(), err)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
