package localfed_test

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// TestHostWithoutControlPlane starts a host cluster and one member with no
// control plane: the host's Services get loopback ClusterIPs, it takes
// loopback pod IPs, and the member's credentials are there to join it to a
// control plane a test makes.
func TestHostWithoutControlPlane(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{
		Host: true, NoControlPlane: true, Members: 1,
		Nodes: localfed.NodeOptions{Count: 1},
	})
	ctx := t.Context()
	if f.ControlPlane != nil || f.Cluster(localfed.ControlPlaneName) != nil {
		t.Errorf("a control plane was started")
	}
	if f.Host == nil || f.Cluster(localfed.HostName) != f.Host {
		t.Fatalf("Host = %v, want the cluster called %s", f.Host, localfed.HostName)
	}

	cfg, err := clientcmd.LoadFromFile(f.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	contexts := make([]string, 0, len(cfg.Contexts))
	for name := range cfg.Contexts {
		contexts = append(contexts, name)
	}
	slices.Sort(contexts)
	if want := []string{localfed.HostName, "member1"}; !slices.Equal(contexts, want) || cfg.CurrentContext != localfed.HostName {
		t.Errorf("kubeconfig contexts = %v (current %q), want %v (current %q)", contexts, cfg.CurrentContext, want, localfed.HostName)
	}

	cidr, err := netip.ParsePrefix(f.Host.ServiceCIDR())
	if err != nil || !cidr.Addr().IsLoopback() {
		t.Fatalf("host Service range %q, want a block of 127.0.0.0/8 (%v)", f.Host.ServiceCIDR(), err)
	}
	host, err := kubernetes.NewForConfig(f.Host.Config)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := host.CoreV1().Services(metav1.NamespaceDefault).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Service on the host: %v", err)
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !cidr.Contains(ip) {
		t.Errorf("ClusterIP %q, want one in %s", svc.Spec.ClusterIP, cidr)
	}

	// A node agent reports loopback pod IPs; the API server takes them.
	pod, err := host.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loopback"},
		Spec: corev1.PodSpec{
			NodeName:                      "nowhere",
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: "none"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "127.1.0.7"
	pod.Status.PodIPs = []corev1.PodIP{{IP: pod.Status.PodIP}}
	pod.Status.HostIP = "127.0.0.1"
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	if _, err := host.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Errorf("writing a loopback pod IP: %v", err)
	}

	member := f.Member("member1")
	if member.Token() == "" {
		t.Fatal("member1 has no token for a control plane")
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host: member.Endpoint, BearerToken: member.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAData: member.CAData},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing member1's nodes with its token: %v", err)
	}
}
