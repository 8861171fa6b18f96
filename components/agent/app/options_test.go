package app

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/ratelimiter"
)

func TestEnabledControllers(t *testing.T) {
	tests := []struct {
		spec    string
		want    []string
		wantErr string
	}{
		{"*", []string{ControllerClusterStatus, ControllerExecution, ControllerWorkStatus}, ""},
		{"*,-workStatus", []string{ControllerClusterStatus, ControllerExecution}, ""},
		{"-workStatus,*", []string{ControllerClusterStatus, ControllerExecution}, ""},
		{"execution", []string{ControllerExecution}, ""},
		{"", nil, ""},
		{"*,certRotation", []string{ControllerClusterStatus, ControllerExecution, ControllerWorkStatus, ControllerCertRotation}, ""},
		{"*,serviceExport", nil, `unknown controller "serviceExport"`},
	}
	for _, tt := range tests {
		got, err := EnabledControllers(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--cluster-name=m1"}, ""},
		{nil, "--cluster-name is required"},
		{[]string{"--cluster-name=Not_A_Label"}, `--cluster-name "Not_A_Label"`},
		{[]string{"--cluster-name=m1", "--cluster-lease-renew-interval-fraction=1.5"}, "--cluster-lease-renew-interval-fraction"},
		{[]string{"--cluster-name=m1", "--cluster-lease-duration=0s"}, "--cluster-lease-duration must be positive"},
		{[]string{"--cluster-name=m1", "--cluster-namespace=elsewhere"}, "--cluster-namespace must be karmada-cluster"},
		{[]string{"--cluster-name=m1", "--leader-elect-renew-deadline=20s"}, "--leader-elect-lease-duration"},
		{[]string{"--cluster-name=m1", "--leader-elect=false", "--leader-elect-renew-deadline=20s"}, ""},
		{[]string{"--cluster-name=m1", "--report-secrets=None"}, ""},
		{[]string{"--cluster-name=m1", "--report-secrets=KubeImpersonator"}, ""},
		{[]string{"--cluster-name=m1", "--report-secrets=KubeCredentials,Token"}, `--report-secrets: unknown value "Token"`},
		{[]string{"--cluster-name=m1", "--report-secrets=None,KubeCredentials"}, "--report-secrets: None cannot be combined"},
		{[]string{"--cluster-name=m1", "--proxy-server-address=socks5://127.0.0.1:1080"}, ""},
		{[]string{"--cluster-name=m1", "--proxy-server-address=127.0.0.1:1080"}, "--proxy-server-address"},
		{[]string{"--cluster-name=m1", "--proxy-server-address=ftp://proxy:21"}, "--proxy-server-address \"ftp://proxy:21\": scheme"},
		{[]string{"--cluster-name=m1", "--cluster-success-threshold=0s", "--cluster-failure-threshold=0s"}, ""},
		{[]string{"--cluster-name=m1", "--cluster-failure-threshold=-1s"}, "--cluster-failure-threshold must not be negative"},
		{[]string{"--cluster-name=m1", "--cluster-success-threshold=-1s"}, "--cluster-success-threshold must not be negative"},
		{[]string{"--cluster-name=m1", "--resync-period=-1m"}, "--resync-period must not be negative"},
		{[]string{"--cluster-name=m1", "--cluster-cache-sync-timeout=0s"}, "--cluster-cache-sync-timeout must be positive"},
		{[]string{"--cluster-name=m1", "--concurrent-cluster-syncs=0"}, "--concurrent-cluster-syncs must be positive"},
		{[]string{"--cluster-name=m1", "--rate-limiter-qps=0"}, "--rate-limiter-qps must be positive"},
		{[]string{"--cluster-name=m1", "--rate-limiter-base-delay=1s", "--rate-limiter-max-delay=10ms"}, "--rate-limiter-max-delay"},
		{[]string{"--cluster-name=m1", "--enable-pprof", "--profiling-bind-address="}, "--profiling-bind-address is required with --enable-pprof"},
		{[]string{"--cluster-name=m1", "--karmada-kubeconfig-namespace=Kube_System"}, "--karmada-kubeconfig-namespace"},
		{[]string{"--cluster-name=m1", "--feature-gates=NoSuchGate=true"}, "for flag -feature-gates: unrecognized feature gate: NoSuchGate"},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.args...)
		if err == nil {
			_, err = o.validate()
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestAgentCacheSeesItsOwnObjectsOnly(t *testing.T) {
	opts := agentCache("m1")
	works, clusters := 0, 0
	for obj, by := range opts.ByObject {
		switch obj.(type) {
		case *workv1alpha1.Work:
			works++
			if _, ok := by.Namespaces["karmada-es-m1"]; !ok || len(by.Namespaces) != 1 || by.Transform == nil {
				t.Errorf("Works cached in %v (transform set: %v), want karmada-es-m1 only, deflated", by.Namespaces, by.Transform != nil)
			}
		case *clusterv1alpha1.Cluster:
			clusters++
			if by.Field == nil || by.Field.String() != "metadata.name=m1" {
				t.Errorf("Clusters cached with %v, want metadata.name=m1", by.Field)
			}
		}
	}
	if works != 1 || clusters != 1 {
		t.Errorf("%d Work and %d Cluster entries, want one each", works, clusters)
	}
}

// TestDefaultsAreKarmadas: the new flags' defaults, karmada-agent's.
func TestDefaultsAreKarmadas(t *testing.T) {
	o, err := ParseOptions("--cluster-name=m1")
	if err != nil {
		t.Fatal(err)
	}
	type defaults struct {
		ReportSecrets                  string
		Proxy                          string
		Success, Failure, Resync, Sync time.Duration
		Modeling                       bool
		ClusterSyncs                   int
		RateLimiter                    ratelimiter.Options
		Pprof                          bool
		PprofAddr, KubeconfigNamespace string
	}
	got := defaults{o.reportSecrets, o.proxyServerAddress, o.clusterSuccessThreshold, o.clusterFailureThreshold, o.resyncPeriod,
		o.clusterCacheSyncTimeout, o.resourceModeling, o.concurrentClusterSyncs, o.rateLimiter, o.enablePprof, o.pprofAddr, o.kubeconfigNamespace}
	want := defaults{"KubeCredentials,KubeImpersonator", "", 30 * time.Second, 30 * time.Second, 0, 2 * time.Minute, true, 5,
		ratelimiter.Options{BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second, QPS: 10, BucketSize: 100}, false, ":6060", "karmada-system"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestReportedSecrets(t *testing.T) {
	tests := []struct {
		spec string
		want join.Secrets
	}{
		{"KubeCredentials,KubeImpersonator", join.AllSecrets},
		{"KubeImpersonator, KubeCredentials", join.AllSecrets},
		{"KubeCredentials", join.Secrets{KubeCredentials: true}},
		{"KubeImpersonator", join.Secrets{KubeImpersonator: true}},
		{"None", join.Secrets{}},
	}
	for _, tt := range tests {
		got, err := ReportedSecrets(tt.spec)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q = %+v, want %+v", tt.spec, got, tt.want)
		}
	}
}
