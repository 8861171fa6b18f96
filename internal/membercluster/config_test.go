package membercluster

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func pushCluster(mutate ...func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", UID: "uid-1"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://10.0.0.1:6443",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func credentials(mutate ...func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "member1", ResourceVersion: "7"},
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte("tok"),
			clusterv1alpha1.SecretCADataKey: []byte("ca-pem"),
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func TestRestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		secret  *corev1.Secret
		wantErr error
		check   func(t *testing.T, host, token string, ca []byte, insecure, proxied bool)
	}{
		{
			name:    "push with token and CA",
			cluster: pushCluster(),
			secret:  credentials(),
			check: func(t *testing.T, host, token string, ca []byte, insecure, proxied bool) {
				if host != "https://10.0.0.1:6443" || token != "tok" || string(ca) != "ca-pem" || insecure || proxied {
					t.Errorf("got host=%q token=%q ca=%q insecure=%v proxied=%v", host, token, ca, insecure, proxied)
				}
			},
		},
		{
			name:    "insecure drops the CA, which client-go refuses together with Insecure",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true }),
			secret:  credentials(),
			check: func(t *testing.T, _, _ string, ca []byte, insecure, _ bool) {
				if !insecure || len(ca) != 0 {
					t.Errorf("insecure=%v ca=%q, want insecure and no CA", insecure, ca)
				}
			},
		},
		{
			name:    "proxy",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "socks5://proxy:1080" }),
			secret:  credentials(),
			check: func(t *testing.T, _, _ string, _ []byte, _, proxied bool) {
				if !proxied {
					t.Error("proxy not set")
				}
			},
		},
		{
			name:    "bad proxy URL",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "http://[::1" }),
			secret:  credentials(),
			wantErr: errAny,
		},
		{
			name:    "pull mode",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = clusterv1alpha1.Pull }),
			secret:  credentials(),
			wantErr: ErrPullMode,
		},
		{
			name:    "no endpoint",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "" }),
			secret:  credentials(),
			wantErr: ErrNoEndpoint,
		},
		{
			name:    "no token",
			cluster: pushCluster(),
			secret:  credentials(func(s *corev1.Secret) { delete(s.Data, clusterv1alpha1.SecretTokenKey) }),
			wantErr: ErrNoToken,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := restConfig(tt.cluster, tt.secret, Options{})
			if tt.wantErr != nil {
				if err == nil || (!errors.Is(tt.wantErr, errAny) && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.QPS != DefaultQPS || cfg.Burst != DefaultBurst {
				t.Errorf("qps/burst = %v/%d, want defaults", cfg.QPS, cfg.Burst)
			}
			tt.check(t, cfg.Host, cfg.BearerToken, cfg.CAData, cfg.Insecure, cfg.Proxy != nil)
		})
	}
}

// errAny stands for "some error" in tables.
var errAny = errors.New("any error")

func TestProxyHeader(t *testing.T) {
	got := proxyHeader(map[string]string{
		"Proxy-Authorization": "Basic abc",
		"X-Multi":             "a, b,,c ",
	})
	want := http.Header{
		"Proxy-Authorization": {"Basic abc"},
		"X-Multi":             {"a", "b", "c"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("proxyHeader (-want +got):\n%s", diff)
	}
}

func TestKeyOf(t *testing.T) {
	base := keyOf(pushCluster(), credentials())
	changes := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		secret  *corev1.Secret
		same    bool
	}{
		{name: "nothing", cluster: pushCluster(), secret: credentials(), same: true},
		{
			name: "taints, labels and status do not matter",
			cluster: pushCluster(func(c *clusterv1alpha1.Cluster) {
				c.Labels = map[string]string{"a": "b"}
				c.ResourceVersion = "99"
				c.Generation = 4
				c.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
				c.Status.KubernetesVersion = "v1.37.2"
			}),
			secret: credentials(),
			same:   true,
		},
		{name: "recreated cluster", cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.UID = "uid-2" }), secret: credentials()},
		{name: "endpoint", cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://10.0.0.2:6443" }), secret: credentials()},
		{name: "insecure", cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.InsecureSkipTLSVerification = true }), secret: credentials()},
		{name: "proxy URL", cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "http://p:3128" }), secret: credentials()},
		{name: "proxy header", cluster: pushCluster(func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyHeader = map[string]string{"a": "b"} }), secret: credentials()},
		{name: "secret rotated", cluster: pushCluster(), secret: credentials(func(s *corev1.Secret) { s.ResourceVersion = "8" })},
		{name: "other secret", cluster: pushCluster(), secret: credentials(func(s *corev1.Secret) { s.Name = "other" })},
	}
	for _, tt := range changes {
		t.Run(tt.name, func(t *testing.T) {
			if got := keyOf(tt.cluster, tt.secret) == base; got != tt.same {
				t.Errorf("same key = %v, want %v", got, tt.same)
			}
		})
	}

	// Map order must not matter. Go ranges over a map in a different order
	// each time, so repeated keys of the same headers would soon differ if
	// keyOf followed that order.
	headers := func(c *clusterv1alpha1.Cluster) {
		c.Spec.ProxyHeader = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}
	}
	want := keyOf(pushCluster(headers), nil)
	for range 20 {
		if keyOf(pushCluster(headers), nil) != want {
			t.Error("the same proxy headers gave different keys")
			break
		}
	}
}
