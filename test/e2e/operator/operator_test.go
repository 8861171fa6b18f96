package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/testlog"
	"github.com/flotilla-io/flotilla/operator/app"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// runOperator runs the operator of own's release until stop is called.
func runOperator(t *testing.T, own versions.Release, others ...versions.Release) (stop func()) {
	t.Helper()
	table, err := versions.New(own, others...)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := app.NewManager(fed.Host.Config, app.Options{
		// No Dial: the operator reaches each API server at its Service's
		// ClusterIP, which the host's loopback Service range puts on this
		// machine and the node agent serves.
		MetricsAddr: "0", ProbeAddr: "0", Concurrency: 2, Versions: &table,
	}, testlog.New(t).WithName("operator-"+own.Version))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("operator %s: %v", own.Version, err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func poll(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last: %v)", timeout, what, last)
	}
}

// waitReady waits until the Karmada is Ready at version.
func waitReady(t *testing.T, key client.ObjectKey, version string) *operatorv1alpha1.Karmada {
	t.Helper()
	k := &operatorv1alpha1.Karmada{}
	poll(t, 5*time.Minute, "Karmada "+key.Name+" Ready at "+version, func(ctx context.Context) (bool, error) {
		if err := fed.Host.Client.Get(ctx, key, k); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady)
		if c == nil {
			return false, fmt.Errorf("no Ready condition")
		}
		ok := c.Status == metav1.ConditionTrue && k.Status.KarmadaVersion == version && c.ObservedGeneration == k.Generation
		return ok, fmt.Errorf("Ready=%s %s: %s (version %q)", c.Status, c.Reason, c.Message, k.Status.KarmadaVersion)
	})
	return k
}

func controlPlaneScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// adminClient reads the admin kubeconfig the operator wrote and connects
// with it: TLS against the operator's CA, the admin's client certificate.
func adminClient(t *testing.T, k *operatorv1alpha1.Karmada) client.Client {
	t.Helper()
	if k.Status.SecretRef == nil {
		t.Fatal("status.secretRef is not set")
	}
	sec := &corev1.Secret{}
	if err := fed.Host.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Status.SecretRef.Namespace, Name: k.Status.SecretRef.Name}, sec); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	if cfg.Insecure || len(cfg.CAData) == 0 {
		t.Fatalf("admin kubeconfig does not verify the server: %+v", cfg.TLSClientConfig)
	}
	// The server is the API server's Service DNS name; the node agent is
	// this host cluster's service network.
	cfg.Dial = agent.DialContext
	c, err := client.New(cfg, client.Options{Scheme: controlPlaneScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// join registers a member with the control plane in Push mode, as
// `karmadactl join` does.
func join(t *testing.T, cp client.Client, member string) {
	t.Helper()
	ctx := context.Background()
	m := fed.Member(member)
	kubeSystem := &corev1.Namespace{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: member},
		Data:       map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte(m.Token()), clusterv1alpha1.SecretCADataKey: m.CAData},
	}
	if err := cp.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: member},
		Spec: clusterv1alpha1.ClusterSpec{
			ID: string(kubeSystem.UID), SyncMode: clusterv1alpha1.Push, APIEndpoint: m.Endpoint,
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: member},
			// The cluster proxy's credentials: the member's token, which
			// may impersonate anyone there.
			ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: member},
		},
	}
	if err := cp.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
}

func nginx(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// memberDeployment waits for the Deployment in a member, with replicas.
func memberDeployment(t *testing.T, member string, replicas int32) {
	t.Helper()
	poll(t, 2*time.Minute, "Deployment web in "+member, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := fed.Member(member).Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, d); err != nil {
			return false, err
		}
		return ptr.Deref(d.Spec.Replicas, 1) == replicas, fmt.Errorf("replicas %d", ptr.Deref(d.Spec.Replicas, 1))
	})
}

// TestControlPlaneLifecycle installs a control plane from a Karmada
// resource, uses it as a Karmada user would, and upgrades it by starting a
// newer operator.
func TestControlPlaneLifecycle(t *testing.T) {
	ctx := context.Background()
	host := fed.Host.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-e2e"}}
	if err := host.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stopOld := runOperator(t, oldRelease)

	// The resource is Karmada's own operator sample, as a Karmada user
	// would bring it: Karmada's images, a NodePort Service, etcd on a
	// claim, components Flotilla does not run.
	data, err := os.ReadFile(filepath.Join(moduleRoot(), "config", "samples", "operator_v1alpha1_karmada_karmada-style.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := &operatorv1alpha1.Karmada{}
	if err := yaml.UnmarshalStrict(data, k); err != nil {
		t.Fatal(err)
	}
	k.Namespace = ns.Name
	began := time.Now()
	if err := host.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	k = waitReady(t, client.ObjectKeyFromObject(k), oldRelease.Version)
	t.Logf("Karmada Ready %s after creation", time.Since(began).Round(time.Second))
	if k.Status.KubernetesVersion != "v1.37.2" || k.Status.APIServerService == nil || k.Status.APIServerService.Name != k.Name+"-apiserver" {
		t.Errorf("status: %+v", k.Status)
	}
	if c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionUnsupportedFields); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("UnsupportedFields: %+v", c)
	}
	checkNodePort(t, k)

	cp := adminClient(t, k)
	for _, member := range []string{"member1", "member2"} {
		join(t, cp, member)
	}
	poll(t, 2*time.Minute, "members Ready", func(ctx context.Context) (bool, error) {
		for _, member := range []string{"member1", "member2"} {
			c := &clusterv1alpha1.Cluster{}
			if err := cp.Get(ctx, client.ObjectKey{Name: member}, c); err != nil {
				return false, err
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return false, fmt.Errorf("%s not Ready: %+v", member, c.Status.Conditions)
			}
		}
		return true, nil
	})

	checkAggregated(t, k, "member1")

	if err := cp.Create(ctx, nginx(4)); err != nil {
		t.Fatal(err)
	}
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				},
			},
		},
	}
	if err := cp.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	memberDeployment(t, "member1", 2)
	memberDeployment(t, "member2", 2)

	// The newer operator upgrades the unpinned instance.
	stopOld()
	runOperator(t, newRelease, oldRelease)
	k = waitReady(t, client.ObjectKeyFromObject(k), newRelease.Version)
	for _, name := range []string{k.Name + "-controller-manager", k.Name + "-scheduler", k.Name + "-webhook"} {
		d := &appsv1.Deployment{}
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+newRelease.Version) {
			t.Errorf("%s runs %s after the upgrade", name, img)
		}
	}

	// Everything is still there, and the upgraded controllers still
	// propagate: a change of the template reaches the members.
	cp = adminClient(t, k)
	for _, obj := range []client.Object{&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}} {
		if err := cp.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("after the upgrade: %v", err)
		}
	}
	checkAggregated(t, k, "member2")
	web := &appsv1.Deployment{}
	if err := cp.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	web.Spec.Replicas = ptr.To[int32](6)
	if err := cp.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	memberDeployment(t, "member1", 3)
	memberDeployment(t, "member2", 3)
}

// adminConfig is the admin kubeconfig the operator wrote, dialling through
// the node agent's Service network.
func adminConfig(t *testing.T, k *operatorv1alpha1.Karmada) *rest.Config {
	t.Helper()
	sec := &corev1.Secret{}
	if err := fed.Host.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Status.SecretRef.Namespace, Name: k.Status.SecretRef.Name}, sec); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	cfg.Dial = agent.DialContext
	return cfg
}

// checkAggregated: the control plane serves Clusters from the operator's
// aggregated API server — the APIService taken over from the Cluster CRD
// (no longer automanaged) and Available — and a read through
// clusters/proxy reaches the member, as the admin.
func checkAggregated(t *testing.T, k *operatorv1alpha1.Karmada, member string) {
	t.Helper()
	ctx := context.Background()
	cfg := adminConfig(t, k)
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1alpha1.cluster.karmada.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.Labels["kube-aggregator.kubernetes.io/automanaged"]; ok || svc.Spec.Service == nil ||
		svc.Spec.Service.Namespace != "karmada-system" || svc.Spec.Service.Name != "karmada-aggregated-apiserver" {
		t.Errorf("APIService v1alpha1.cluster.karmada.io: labels %v, spec %+v", svc.Labels, svc.Spec)
	}
	available := false
	for _, c := range svc.Status.Conditions {
		available = available || (c.Type == apiregistrationv1.Available && c.Status == apiregistrationv1.ConditionTrue)
	}
	if !available {
		t.Errorf("APIService v1alpha1.cluster.karmada.io is not Available: %+v", svc.Status.Conditions)
	}
	d := &appsv1.Deployment{}
	if err := fed.Host.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name + "-aggregated-apiserver"}, d); err != nil {
		t.Fatalf("the aggregated API server's Deployment: %v", err)
	}

	want := &corev1.Namespace{}
	if err := fed.Member(member).Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, want); err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Namespace
	poll(t, time.Minute, "kube-system of "+member+" through clusters/proxy", func(ctx context.Context) (bool, error) {
		raw, err := kube.CoreV1().RESTClient().Get().
			AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters", member, "proxy", "api/v1/namespaces/kube-system").
			DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return true, json.Unmarshal(raw, &got)
	})
	if got.UID != want.UID {
		t.Errorf("kube-system through the proxy has UID %s; the member's is %s", got.UID, want.UID)
	}
}

// checkNodePort reaches the API server through its NodePort on the node's
// address, with the admin credentials and the operator's CA, as a user
// outside the host cluster would.
func checkNodePort(t *testing.T, k *operatorv1alpha1.Karmada) {
	t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{}
	if err := fed.Host.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Status.APIServerService.Name}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("the API server's Service is not a NodePort: %+v", svc.Spec)
	}
	sec := &corev1.Secret{}
	if err := fed.Host.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Status.SecretRef.Name}, sec); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	// The node agent's node is 127.0.0.1, which the certificate names.
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", svc.Spec.Ports[0].NodePort)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		t.Fatalf("API server through NodePort %d: %v", svc.Spec.Ports[0].NodePort, err)
	}
	if info.GitVersion != "v1.37.2" {
		t.Errorf("version through the NodePort: %s", info.GitVersion)
	}
}
