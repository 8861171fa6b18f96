package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/app"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// TestAggregatedAPIServer takes Clusters over from the CRD on a running
// control plane, as an upgrade does, and checks that nothing a client sees
// changes, then that the proxy lets each user do in the member what the
// member lets that user do.
func TestAggregatedAPIServer(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{Members: 1, APIServerOnlyMembers: true})
	ctx := t.Context()
	cp := f.ControlPlane.Client
	member := f.Members[0]

	before := &clusterv1alpha1.Cluster{}
	if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, before); err != nil {
		t.Fatalf("reading the CRD-served Cluster: %v", err)
	}
	invalid := []*clusterv1alpha1.Cluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "bad-mode"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: "Sideways"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bad-endpoint"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "ftp://x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "no-endpoint"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}},
	}
	crdErrors := createErrors(ctx, t, cp, invalid)

	if err := f.StartAggregatedAPIServer(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("APIService taken over", func(t *testing.T) {
		agg := aggregator.NewForConfigOrDie(f.ControlPlane.Config)
		svc, err := agg.ApiregistrationV1().APIServices().Get(ctx, app.APIServiceName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if svc.Spec.Service == nil || svc.Spec.Service.Name != app.ServiceName {
			t.Errorf("spec.service = %+v, want %s", svc.Spec.Service, app.ServiceName)
		}
		if _, ok := svc.Labels["kube-aggregator.kubernetes.io/automanaged"]; ok {
			t.Errorf("the APIService is still the CRD's: labels %v", svc.Labels)
		}
		if !available(svc) {
			t.Errorf("APIService not Available: %+v", svc.Status.Conditions)
		}
	})

	t.Run("existing Clusters kept", func(t *testing.T) {
		after := &clusterv1alpha1.Cluster{}
		if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, after); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("Cluster changed in the move (-CRD +aggregated):\n%s", diff)
		}
	})

	t.Run("same validation as the CRD", func(t *testing.T) {
		got := createErrors(ctx, t, cp, invalid)
		if diff := cmp.Diff(crdErrors, got); diff != "" {
			t.Errorf("errors differ (-CRD +aggregated):\n%s", diff)
		}
	})

	t.Run("status, generation and watch", func(t *testing.T) {
		w, err := clusterWatch(ctx, f.ControlPlane.Config)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		c := &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "pull-one"},
			Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull},
			Status:     clusterv1alpha1.ClusterStatus{KubernetesVersion: "v0.0.1"},
		}
		if err := cp.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Status.KubernetesVersion != "" || c.Generation != 1 {
			t.Errorf("created: status %+v generation %d, want status dropped and generation 1 as for a CRD", c.Status, c.Generation)
		}
		waitEvent(t, w, watch.Added, c.Name)
		c.Status.KubernetesVersion = "v1.37.2"
		if err := cp.Status().Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Generation != 1 {
			t.Errorf("status update moved generation to %d", c.Generation)
		}
		c.Spec.Region = "eu"
		c.Status.KubernetesVersion = "overwritten"
		if err := cp.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.Generation != 2 || c.Status.KubernetesVersion != "v1.37.2" {
			t.Errorf("spec update: generation %d, status %q; want 2 and the status kept", c.Generation, c.Status.KubernetesVersion)
		}
		waitEvent(t, w, watch.Modified, c.Name)
		if err := cp.Delete(ctx, c); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, w, watch.Deleted, c.Name)
	})

	t.Run("printer columns", func(t *testing.T) {
		kube := kubernetes.NewForConfigOrDie(f.ControlPlane.Config)
		var table metav1.Table
		raw, err := kube.Discovery().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &table); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range table.ColumnDefinitions {
			names = append(names, c.Name)
		}
		if diff := cmp.Diff([]string{"Name", "VERSION", "MODE", "READY", "AGE"}, names); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
	})

	t.Run("proxy impersonates the user", func(t *testing.T) {
		// The controller-manager's unified-auth controller decides whom the
		// member's impersonator may impersonate: those the control plane
		// lets proxy to it.
		startControllerManager(t, f)
		mc := member.Client
		for _, ns := range []string{"team-a", "team-b"} {
			if err := mc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
			if err := mc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}); err != nil {
				t.Fatal(err)
			}
		}
		const user = "system:serviceaccount:default:alice"
		mustCreate(ctx, t, mc,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "read"},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "alice"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "alice"}}
		mustCreate(ctx, t, cp, sa)
		alice := userConfig(ctx, t, f.ControlPlane, sa)
		base := "/apis/cluster.karmada.io/v1alpha1/clusters/" + member.Name + "/proxy"

		if code := get(ctx, t, alice, base+"/api/v1/namespaces/team-a/configmaps"); code != http.StatusForbidden {
			t.Errorf("without clusters/proxy in the control plane: %d, want 403", code)
		}
		mustCreate(ctx, t, cp,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-member"},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters/proxy"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-proxy-member"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-member"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}})
		for path, want := range map[string]int{
			"/api/v1/namespaces/team-a/configmaps":          http.StatusOK,
			"/api/v1/namespaces/team-a/configmaps/settings": http.StatusOK,
			"/api/v1/namespaces/team-b/configmaps":          http.StatusForbidden,
			"/api/v1/configmaps":                            http.StatusForbidden,
		} {
			// RBAC in the control plane takes a moment to reach its cache,
			// and the member's impersonator's rights a few more.
			if code := getUntil(ctx, t, alice, base+path, want); code != want {
				t.Errorf("alice GET %s: %d, want %d", path, code, want)
			}
		}
		admin := rest.CopyConfig(f.ControlPlane.Config)
		if code := getUntil(ctx, t, admin, base+"/api/v1/namespaces/team-b/configmaps/settings", http.StatusOK); code != http.StatusOK {
			t.Errorf("admin through the proxy: %d, want 200", code)
		}
		if code := get(ctx, t, admin, "/apis/cluster.karmada.io/v1alpha1/clusters/no-such-member/proxy/api"); code != http.StatusNotFound {
			t.Errorf("proxy to a Cluster that does not exist: %d, want 404", code)
		}
	})
}

// getUntil GETs path until it answers want, for up to a minute, and returns
// the last answer.
func getUntil(ctx context.Context, t *testing.T, cfg *rest.Config, path string, want int) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	code := get(ctx, t, cfg, path)
	for code != want && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		code = get(ctx, t, cfg, path)
	}
	return code
}

// startControllerManager runs the controller-manager on f's control plane
// until the test ends.
func startControllerManager(t *testing.T, f *localfed.Federation) {
	t.Helper()
	// Clients built outside a manager log through controller-runtime's
	// global logger, which would otherwise complain it was never set.
	ctrllog.SetLogger(logr.Discard())
	opts, err := cmapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0", "--cluster-health-probe-period=1s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmapp.Run(ctx, f.ControlPlane.Config, opts, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stopping the controller-manager: %v", err)
		}
	})
}

func createErrors(ctx context.Context, t *testing.T, c client.Client, clusters []*clusterv1alpha1.Cluster) []string {
	t.Helper()
	var out []string
	for _, cl := range clusters {
		err := c.Create(ctx, cl.DeepCopy(), client.DryRunAll)
		if !apierrors.IsInvalid(err) {
			t.Fatalf("creating %s: %v, want Invalid", cl.Name, err)
		}
		out = append(out, err.Error())
	}
	return out
}

func available(s *apiregistrationv1.APIService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

func clusterWatch(ctx context.Context, cfg *rest.Config) (watch.Interface, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(clusterv1alpha1.GroupVersion.WithResource("clusters")).Watch(ctx, metav1.ListOptions{})
}

// waitEvent waits for an event of type on the Cluster name.
func waitEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed waiting for %s %s", typ, name)
			}
			if ev.Type != typ {
				continue
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s", typ, name)
		}
	}
}

func mustCreate(ctx context.Context, t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// userConfig is a client of the control plane as sa, with a token from the
// TokenRequest API.
func userConfig(ctx context.Context, t *testing.T, cp *localfed.Cluster, sa *corev1.ServiceAccount) *rest.Config {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := cp.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatalf("requesting a token for %s: %v", sa.Name, err)
	}
	return &rest.Config{Host: cp.Endpoint, BearerToken: req.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAData}}
}

func get(ctx context.Context, t *testing.T, cfg *rest.Config, path string) int {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var code int
	res := kube.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).StatusCode(&code)
	if err := res.Error(); err != nil && code == 0 {
		t.Fatalf("GET %s: %v", path, err)
	}
	if err := res.Error(); err != nil {
		t.Logf("GET %s: %d: %v", path, code, strings.TrimSpace(err.Error()))
	}
	return code
}
