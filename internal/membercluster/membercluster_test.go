package membercluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

func TestClientsReachTheMemberWithItsToken(t *testing.T) {
	s := shared.get(t)
	ctx := t.Context()
	s.register(t, "reach")
	clients, err := membercluster.NewClientCache(s.client, nil, membercluster.Options{}).Get(ctx, "reach")
	if err != nil {
		t.Fatal(err)
	}

	// Every client authenticates as the ServiceAccount of the Secret, not as
	// the admin the test runs as.
	review, err := clients.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	if want := "system:serviceaccount:" + secretNamespace + ":" + memberSA; review.Status.UserInfo.Username != want {
		t.Errorf("member sees user %q, want %q", review.Status.UserInfo.Username, want)
	}
	if v, err := clients.Discovery.ServerVersionWithContext(ctx); err != nil || v.GitVersion == "" {
		t.Errorf("ServerVersion = %v, %v", v, err)
	}
	nsGVR := corev1.SchemeGroupVersion.WithResource("namespaces")
	if _, err := clients.Dynamic.Resource(nsGVR).Get(ctx, secretNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("dynamic get: %v", err)
	}
	var ns corev1.Namespace
	if err := clients.Client.Get(ctx, client.ObjectKey{Name: secretNamespace}, &ns); err != nil {
		t.Errorf("controller-runtime get: %v", err)
	}
}

func TestClientsAreRebuiltWhenTheConnectionChanges(t *testing.T) {
	s := shared.get(t)
	ctx := t.Context()
	cluster, secret := s.register(t, "cached")
	clientCache := membercluster.NewClientCache(s.client, nil, membercluster.Options{})

	first, err := clientCache.Get(ctx, "cached")
	if err != nil {
		t.Fatal(err)
	}
	again, err := clientCache.Get(ctx, "cached")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("a second Get rebuilt the clients")
	}

	// Taints are not part of the connection.
	patch := client.MergeFrom(cluster.DeepCopy())
	cluster.Spec.Taints = []corev1.Taint{{Key: "example.com/t", Effect: corev1.TaintEffectNoSchedule}}
	if err := s.client.Patch(ctx, cluster, patch); err != nil {
		t.Fatal(err)
	}
	if got, err := clientCache.Get(ctx, "cached"); err != nil || got != first {
		t.Errorf("after a taint change: rebuilt=%v err=%v, want the same clients", got != first, err)
	}

	// A rotated Secret is.
	patch = client.MergeFrom(secret.DeepCopy())
	secret.Data["rotated"] = []byte("yes")
	if err := s.client.Patch(ctx, secret, patch); err != nil {
		t.Fatal(err)
	}
	rotated, err := clientCache.Get(ctx, "cached")
	if err != nil {
		t.Fatal(err)
	}
	if rotated == first {
		t.Error("the clients were not rebuilt after the Secret changed")
	}

	// So is the endpoint's TLS verification.
	patch = client.MergeFrom(cluster.DeepCopy())
	cluster.Spec.InsecureSkipTLSVerification = true
	if err := s.client.Patch(ctx, cluster, patch); err != nil {
		t.Fatal(err)
	}
	insecure, err := clientCache.Get(ctx, "cached")
	if err != nil {
		t.Fatal(err)
	}
	if insecure == rotated || !insecure.Config.Insecure {
		t.Error("the clients were not rebuilt after insecureSkipTLSVerification changed")
	}
	if _, err := insecure.Discovery.ServerVersionWithContext(ctx); err != nil {
		t.Errorf("insecure clients: %v", err)
	}

	clientCache.Forget("cached")
	if clientCache.Cached("cached") {
		t.Error("Forget kept the clients")
	}
}

func TestClientErrors(t *testing.T) {
	s := shared.get(t)
	ctx := t.Context()
	s.register(t, "pull", func(c *clusterv1alpha1.Cluster) {
		c.Spec.SyncMode = clusterv1alpha1.Pull
		c.Spec.APIEndpoint = ""
	})
	s.register(t, "nosecret", func(c *clusterv1alpha1.Cluster) {
		c.Spec.SecretRef.Name = "missing"
	})
	clientCache := membercluster.NewClientCache(s.client, nil, membercluster.Options{})

	if _, err := clientCache.Get(ctx, "pull"); !errors.Is(err, membercluster.ErrPullMode) {
		t.Errorf("pull cluster: err = %v, want ErrPullMode", err)
	}
	if _, err := clientCache.Get(ctx, "nosecret"); !apierrors.IsNotFound(err) {
		t.Errorf("missing Secret: err = %v, want NotFound", err)
	}
	if _, err := clientCache.Get(ctx, "nonexistent"); !apierrors.IsNotFound(err) {
		t.Errorf("missing Cluster: err = %v, want NotFound", err)
	}
}

// TestLocalClients: an agent's own member is reached with the configuration
// it was given, although its Cluster is Pull and names no Secret; other
// Pull clusters still are not reached.
func TestLocalClients(t *testing.T) {
	s := shared.get(t)
	ctx := t.Context()
	s.register(t, "self", func(c *clusterv1alpha1.Cluster) {
		c.Spec.SyncMode = clusterv1alpha1.Pull
		c.Spec.APIEndpoint = ""
		c.Spec.SecretRef = nil
	})
	s.register(t, "other-pull", func(c *clusterv1alpha1.Cluster) {
		c.Spec.SyncMode = clusterv1alpha1.Pull
		c.Spec.APIEndpoint = ""
	})
	clientCache := membercluster.NewClientCache(s.client, nil, membercluster.Options{})
	clientCache.SetLocal("self", s.cfg)

	clients, err := clientCache.Get(ctx, "self")
	if err != nil {
		t.Fatal(err)
	}
	review, err := clients.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	if review.Status.UserInfo.Username == "system:serviceaccount:"+secretNamespace+":"+memberSA {
		t.Errorf("local clients authenticate as the Secret's ServiceAccount, want the configuration's user")
	}
	again, err := clientCache.Get(ctx, "self")
	if err != nil || again != clients {
		t.Errorf("second Get: %p, %v; want the cached clients %p", again, err, clients)
	}
	if _, err := clientCache.Get(ctx, "other-pull"); !errors.Is(err, membercluster.ErrPullMode) {
		t.Errorf("another Pull cluster: err = %v, want ErrPullMode", err)
	}
}

// configMapKey is the informer the tests run through Informer.
const configMapKey = "test/configmaps"

func newConfigMapInformer(c *membercluster.Clients) cache.SharedIndexInformer {
	cms := c.Kube.CoreV1().ConfigMaps(secretNamespace)
	return cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cms.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return cms.Watch(ctx, opts)
		},
	}, &corev1.ConfigMap{}, 0, cache.Indexers{})
}

func TestInformers(t *testing.T) {
	s := shared.get(t)
	ctx := t.Context()
	_, secret := s.register(t, "informed")
	clients := membercluster.NewClientCache(s.client, nil, membercluster.Options{})
	m := membercluster.NewInformerManager(clients, testr.New(t))
	mgrCtx, stopManager := context.WithCancel(ctx)
	managerDone := make(chan error)
	go func() { managerDone <- m.Start(mgrCtx) }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: "seen"}}
	if err := s.client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.client.Delete(context.Background(), cm) })

	typed, err := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer)
	if err != nil {
		t.Fatal(err)
	}
	dynamic, err := m.Dynamic(ctx, "informed", corev1.SchemeGroupVersion.WithResource("configmaps"))
	if err != nil {
		t.Fatal(err)
	}
	for name, inf := range map[string]cache.SharedIndexInformer{"typed": typed, "dynamic": dynamic} {
		waitFor(t, name+" informer has the ConfigMap", func() bool {
			_, ok, _ := inf.GetStore().GetByKey(secretNamespace + "/seen")
			return inf.HasSynced() && ok
		})
	}
	if again, _ := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer); again != typed {
		t.Error("asking again for the same key started another informer")
	}
	want := []string{membercluster.DynamicKey(corev1.SchemeGroupVersion.WithResource("configmaps")), configMapKey}
	if got := m.Running("informed"); !slices.Equal(got, want) {
		t.Errorf("Running = %v, want %v", got, want)
	}

	m.StopDynamic("informed", corev1.SchemeGroupVersion.WithResource("configmaps"))
	if !dynamic.IsStopped() || !slices.Equal(m.Running("informed"), []string{configMapKey}) {
		t.Errorf("StopDynamic: stopped=%v running=%v", dynamic.IsStopped(), m.Running("informed"))
	}

	// New credentials: the informers are rebuilt with them on the next ask.
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Data["rotated"] = []byte("yes")
	if err := s.client.Patch(ctx, secret, patch); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt == typed {
		t.Error("the informer was kept after the member's credentials changed")
	}
	if !typed.IsStopped() {
		t.Error("the informer on the old credentials still runs")
	}
	if got := m.Running("informed"); !slices.Equal(got, []string{configMapKey}) {
		t.Errorf("Running after the rebuild = %v, want only %s", got, configMapKey)
	}

	m.StopInformer("informed", configMapKey)
	if !rebuilt.IsStopped() || len(m.Running("informed")) != 0 {
		t.Errorf("StopInformer: stopped=%v running=%v", rebuilt.IsStopped(), m.Running("informed"))
	}

	// Stop ends everything of a member.
	other, err := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer)
	if err != nil {
		t.Fatal(err)
	}
	m.Stop("informed")
	if !other.IsStopped() || len(m.Running("informed")) != 0 {
		t.Errorf("Stop: stopped=%v running=%v", other.IsStopped(), m.Running("informed"))
	}

	// The manager's shutdown stops the rest and refuses new informers.
	last, err := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer)
	if err != nil {
		t.Fatal(err)
	}
	stopManager()
	if err := <-managerDone; err != nil {
		t.Fatal(err)
	}
	if !last.IsStopped() {
		t.Error("shutdown left an informer running")
	}
	if _, err := m.Informer(ctx, "informed", configMapKey, newConfigMapInformer); !errors.Is(err, membercluster.ErrInformerManagerStopped) {
		t.Errorf("Informer after shutdown: err = %v", err)
	}
}

func TestInformerOfAGoneCluster(t *testing.T) {
	s := shared.get(t)
	clients := membercluster.NewClientCache(s.client, nil, membercluster.Options{})
	m := membercluster.NewInformerManager(clients, testr.New(t))
	if _, err := m.Informer(t.Context(), "gone", configMapKey, newConfigMapInformer); !apierrors.IsNotFound(err) {
		t.Errorf("err = %v, want NotFound", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}
