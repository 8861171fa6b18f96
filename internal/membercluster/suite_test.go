package membercluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// apiServer is one envtest API server shared by the package's integration
// tests. It plays both parts: the control plane holding Clusters and Secrets,
// and the member those Clusters point at, reached with a ServiceAccount
// token as a real member is.
type apiServer struct {
	once sync.Once
	err  error
	env  *envtest.Environment

	cfg      *rest.Config
	client   client.Client // admin, no cache
	endpoint string
	token    string
}

var shared = &apiServer{}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// get starts the API server on first use.
func (s *apiServer) get(t *testing.T) *apiServer {
	t.Helper()
	s.once.Do(func() { s.err = s.start(context.Background()) })
	if s.err != nil {
		t.Fatalf("starting envtest: %v", s.err)
	}
	return s
}

const (
	secretNamespace = "karmada-cluster"
	memberSA        = "member"
)

func (s *apiServer) start(ctx context.Context) error {
	binDir, err := localfed.ResolveBinDir("")
	if err != nil {
		return err
	}
	s.env = &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if s.cfg, err = s.env.Start(); err != nil {
		return err
	}
	if s.client, err = client.New(s.cfg, client.Options{Scheme: newScheme()}); err != nil {
		return err
	}
	s.endpoint = s.cfg.Host
	if !strings.HasPrefix(s.endpoint, "https://") {
		s.endpoint = "https://" + s.endpoint
	}

	// The member side: a cluster-admin ServiceAccount and a token for it, as
	// `karmadactl join` sets up.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: memberSA}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNamespace}},
		sa,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "member-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: secretNamespace, Name: memberSA}},
		},
	} {
		if err := s.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := s.client.SubResource("token").Create(ctx, sa, req); err != nil {
		return fmt.Errorf("requesting a token: %w", err)
	}
	s.token = req.Status.Token
	return nil
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = clusterv1alpha1.AddToScheme(scheme)
	return scheme
}

// register creates a Push Cluster named name pointing at the API server with
// its own credentials Secret, and removes both when the test ends.
func (s *apiServer) register(t *testing.T, name string, mutate ...func(*clusterv1alpha1.Cluster)) (*clusterv1alpha1.Cluster, *corev1.Secret) {
	t.Helper()
	ctx := t.Context()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name},
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte(s.token),
			clusterv1alpha1.SecretCADataKey: s.cfg.CAData,
		},
	}
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: s.endpoint,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: secretNamespace, Name: name},
		},
	}
	for _, m := range mutate {
		m(cluster)
	}
	for _, obj := range []client.Object{secret, cluster} {
		if err := s.client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = s.client.Delete(ctx, cluster)
		_ = s.client.Delete(ctx, secret)
	})
	return cluster, secret
}
