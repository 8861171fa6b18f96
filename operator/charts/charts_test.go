package charts

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const (
	testInstance  = "demo"
	testNamespace = "flotilla-system"
)

// kubeVersion is the host cluster version the charts are rendered for.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}

// chartCase is a set of values for one chart, installed as the operator
// names releases: <instance>-<chart>.
type chartCase struct {
	name   string
	chart  string
	values map[string]any
}

func (c chartCase) release() string { return testInstance + "-" + c.chart }

// cases are representative values of every chart, the defaults first; each
// must lint, render, decode and run with real flags.
var cases = []chartCase{
	{name: "defaults", chart: Etcd},
	{name: "three members on PVCs", chart: Etcd, values: map[string]any{
		"replicas":            3,
		"initialClusterToken": "demo-token",
		"storage": map[string]any{"volumeClaim": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"backup": "daily"}, "name": "ignored"},
			"spec": map[string]any{
				"accessModes":      []any{"ReadWriteOnce"},
				"storageClassName": "fast",
				"resources":        map[string]any{"requests": map[string]any{"storage": "5Gi"}},
			},
		}},
		"podDisruptionBudget": map[string]any{"maxUnavailable": 1},
		"labels":              map[string]any{"team": "platform"},
		"annotations":         map[string]any{"example.com/owner": "platform"},
		"podAnnotations":      map[string]any{"flotilla.io/cert-hash": "abc123"},
		"resources":           map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"weight": 100,
				"podAffinityTerm": map[string]any{
					"topologyKey":   "kubernetes.io/hostname",
					"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "demo-etcd"}},
				},
			}},
		}},
		"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
		"priorityClassName": "system-cluster-critical",
		"extraArgs": map[string]any{
			"quota-backend-bytes":    8589934592.0, // a whole float64, as YAML gives it
			"snapshot-count":         10000,
			"initial-cluster-state":  "new",
			"--auto-compaction-mode": "periodic",
		},
	}},
	{name: "hostPath", chart: Etcd, values: map[string]any{
		"storage":       map[string]any{"hostPath": map[string]any{"path": "/var/lib/flotilla/etcd", "type": "DirectoryOrCreate"}},
		"clusterDomain": "corp.example",
		"nodeSelector":  map[string]any{"node-role.kubernetes.io/control-plane": ""},
	}},
	{name: "memory emptyDir", chart: Etcd, values: map[string]any{
		"storage":          map[string]any{"emptyDir": map[string]any{"medium": "Memory", "sizeLimit": "1Gi"}},
		"imagePullSecrets": []any{"regcred"},
		"image":            map[string]any{"repository": "mirror.example/etcd", "tag": "3.6.16-0"},
	}},

	{name: "defaults", chart: APIServer},
	{name: "NodePort, external etcd, flags", chart: APIServer, values: map[string]any{
		"replicas": 2,
		"service":  map[string]any{"type": "NodePort", "nodePort": 32443},
		"etcd": map[string]any{"servers": []any{
			"https://etcd-a.example:2379", "https://etcd-b.example:2379", "https://etcd-c.example:2379",
		}},
		"featureGates": map[string]any{"APIServerIdentity": false, "AllAlpha": false},
		"extraArgs": map[string]any{
			"authorization-mode":    "RBAC,Webhook",
			"max-requests-inflight": 800,
			"audit-log-path":        "-",
		},
		"extraVolumes":        []any{map[string]any{"name": "audit", "configMap": map[string]any{"name": "audit-policy"}}},
		"extraVolumeMounts":   []any{map[string]any{"name": "audit", "mountPath": "/etc/flotilla/audit", "readOnly": true}},
		"sidecarContainers":   []any{map[string]any{"name": "kms", "image": "kms.example/plugin:1.0"}},
		"podDisruptionBudget": map[string]any{"minAvailable": "50%"},
	}},
	{name: "LoadBalancer", chart: APIServer, values: map[string]any{
		"instanceName": "other",
		"service": map[string]any{
			"type":              "LoadBalancer",
			"loadBalancerClass": "example.com/lb",
			"annotations":       map[string]any{"example.com/internal": "true"},
		},
		"serviceSubnet": "10.200.0.0/16",
	}},

	{name: "defaults", chart: KubeControllerManager},
	{name: "controllers and flags", chart: KubeControllerManager, values: map[string]any{
		"replicas":         2,
		"controllers":      []any{"namespace-controller", "garbage-collector-controller", "certificatesigningrequest-signing-controller"},
		"featureGates":     map[string]any{"AllBeta": false},
		"extraArgs":        map[string]any{"leader-elect": false, "kube-api-qps": 100, "concurrent-gc-syncs": "30"},
		"kubeconfigSecret": "kcm-kubeconfig",
		"certSecret":       "kcm-pki",
	}},

	{name: "defaults", chart: ControllerManager},
	{name: "flags", chart: ControllerManager, values: map[string]any{
		"replicas":         2,
		"extraArgs":        map[string]any{"v": 2, "concurrent-work-syncs": 40, "leader-elect": false},
		"kubeconfigSecret": "cm-kubeconfig",
	}},

	{name: "defaults", chart: Scheduler},
	{name: "flags", chart: Scheduler, values: map[string]any{
		"extraArgs": map[string]any{"workers": 32, "scheduler-name": "default-scheduler"},
		"resources": map[string]any{"limits": map[string]any{"memory": "512Mi"}},
	}},
}

func TestNamesAndLoad(t *testing.T) {
	want := []string{"etcd", "apiserver", "kube-controller-manager", "controller-manager", "scheduler"}
	if diff := cmp.Diff(want, Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
	for _, name := range Names() {
		c, err := Load(name)
		if err != nil {
			t.Fatalf("Load(%q): %v", name, err)
		}
		if c.Name() != name || c.Metadata.Version != "0.1.0" || c.Metadata.AppVersion != "0.1.0" || c.Metadata.APIVersion != "v2" {
			t.Errorf("chart %s: metadata %+v", name, c.Metadata)
		}
		if len(c.Templates) == 0 || c.Values == nil {
			t.Errorf("chart %s: no templates or values", name)
		}
		if !slices.ContainsFunc(c.Files, func(f *chart.File) bool { return f.Name == "README.md" }) {
			t.Errorf("chart %s: no README.md", name)
		}
	}
	if _, err := Load("webhook"); err == nil {
		t.Error(`Load("webhook") succeeded; want an error`)
	}
}

// TestLint is `helm lint --strict` of every chart with each case's values.
func TestLint(t *testing.T) {
	for _, c := range cases {
		t.Run(c.chart+"/"+c.name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = testNamespace
			lint.KubeVersion = kubeVersion
			result := lint.Run([]string{c.chart}, c.values)
			for _, msg := range result.Messages {
				t.Logf("%s", msg)
			}
			if result.TotalChartsLinted != 1 || len(result.Errors) > 0 {
				t.Errorf("lint: %d charts linted, errors %v", result.TotalChartsLinted, result.Errors)
			}
		})
	}
}

// TestRender is `helm template`: every object decodes strictly into its
// client-go type, and the objects are wired together.
func TestRender(t *testing.T) {
	for _, c := range cases {
		t.Run(c.chart+"/"+c.name, func(t *testing.T) {
			objs := mustRender(t, c)
			checkWiring(t, c, objs)
		})
	}
}

// TestRenderedValues checks what particular values turn into.
func TestRenderedValues(t *testing.T) {
	byName := func(chart, name string) chartCase {
		for _, c := range cases {
			if c.chart == chart && c.name == name {
				return c
			}
		}
		t.Fatalf("no case %s/%s", chart, name)
		return chartCase{}
	}

	t.Run("etcd defaults", func(t *testing.T) {
		objs := mustRender(t, byName(Etcd, "defaults"))
		sts := objs.statefulSet(t, "demo-etcd")
		wantArgs := []string{
			"--advertise-client-urls=https://$(POD_NAME).demo-etcd.flotilla-system.svc.cluster.local:2379",
			"--cert-file=/etc/flotilla/pki/server.crt",
			"--client-cert-auth=true",
			"--data-dir=/var/lib/etcd/$(POD_NAME)",
			"--initial-advertise-peer-urls=https://$(POD_NAME).demo-etcd.flotilla-system.svc.cluster.local:2380",
			"--initial-cluster=demo-etcd-0=https://demo-etcd-0.demo-etcd.flotilla-system.svc.cluster.local:2380",
			"--initial-cluster-state=new",
			"--initial-cluster-token=demo-etcd",
			"--key-file=/etc/flotilla/pki/server.key",
			"--listen-client-urls=https://$(POD_IP):2379",
			"--listen-metrics-urls=http://$(POD_IP):2381",
			"--listen-peer-urls=https://$(POD_IP):2380",
			"--name=$(POD_NAME)",
			"--peer-cert-file=/etc/flotilla/pki/peer.crt",
			"--peer-client-cert-auth=true",
			"--peer-key-file=/etc/flotilla/pki/peer.key",
			"--peer-trusted-ca-file=/etc/flotilla/pki/ca.crt",
			"--trusted-ca-file=/etc/flotilla/pki/ca.crt",
		}
		ctr := sts.Spec.Template.Spec.Containers[0]
		if diff := cmp.Diff(wantArgs, ctr.Args); diff != "" {
			t.Errorf("etcd args (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"etcd"}, ctr.Command); diff != "" {
			t.Errorf("command (-want +got):\n%s", diff)
		}
		if got := sts.Spec.Template.Spec.Volumes; !hasVolume(got, "data", func(v corev1.Volume) bool { return v.EmptyDir != nil }) {
			t.Errorf("data volume is not an emptyDir: %+v", got)
		}
		if ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.LivenessProbe.HTTPGet.Path != "/livez" ||
			ctr.ReadinessProbe.HTTPGet.Port.String() != "metrics" || containerPort(ctr, "metrics") != 2381 {
			t.Errorf("probes: readiness %+v liveness %+v", ctr.ReadinessProbe.HTTPGet, ctr.LivenessProbe.HTTPGet)
		}
		headless := objs.service(t, "demo-etcd")
		if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses || len(headless.Spec.Ports) != 2 {
			t.Errorf("headless Service: %+v", headless.Spec)
		}
		client := objs.service(t, "demo-etcd-client")
		if client.Spec.Type != corev1.ServiceTypeClusterIP || client.Spec.ClusterIP != "" || len(client.Spec.Ports) != 1 || client.Spec.Ports[0].Port != 2379 {
			t.Errorf("client Service: %+v", client.Spec)
		}
		if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
			t.Errorf("podManagementPolicy %q; want Parallel", sts.Spec.PodManagementPolicy)
		}
		if _, ok := objs.pdb("demo-etcd"); ok {
			t.Error("a PodDisruptionBudget is rendered without podDisruptionBudget values")
		}
	})

	t.Run("etcd three members", func(t *testing.T) {
		objs := mustRender(t, byName(Etcd, "three members on PVCs"))
		sts := objs.statefulSet(t, "demo-etcd")
		args := argMap(t, sts.Spec.Template.Spec.Containers[0].Args)
		var members []string
		for i := range 3 {
			members = append(members, "demo-etcd-"+string(rune('0'+i))+"=https://demo-etcd-"+string(rune('0'+i))+".demo-etcd.flotilla-system.svc.cluster.local:2380")
		}
		if got, want := args["initial-cluster"], strings.Join(members, ","); got != want {
			t.Errorf("--initial-cluster=%s; want %s", got, want)
		}
		for flag, want := range map[string]string{
			"quota-backend-bytes":   "8589934592",
			"snapshot-count":        "10000",
			"initial-cluster-token": "demo-token",
			"auto-compaction-mode":  "periodic",
		} {
			if args[flag] != want {
				t.Errorf("--%s=%s; want %s", flag, args[flag], want)
			}
		}
		if *sts.Spec.Replicas != 3 || len(sts.Spec.VolumeClaimTemplates) != 1 {
			t.Fatalf("replicas %d, claims %d", *sts.Spec.Replicas, len(sts.Spec.VolumeClaimTemplates))
		}
		claim := sts.Spec.VolumeClaimTemplates[0]
		if claim.Name != "data" || claim.Labels["backup"] != "daily" || *claim.Spec.StorageClassName != "fast" {
			t.Errorf("volume claim template: %+v", claim)
		}
		if hasVolume(sts.Spec.Template.Spec.Volumes, "data", nil) {
			t.Error("the pod has a data volume besides the claim template")
		}
		pdb, ok := objs.pdb("demo-etcd")
		if !ok || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
			t.Errorf("PodDisruptionBudget: %+v", pdb)
		}
		tmpl := sts.Spec.Template
		if tmpl.Annotations["flotilla.io/cert-hash"] != "abc123" || tmpl.Annotations["example.com/owner"] != "platform" ||
			sts.Annotations["example.com/owner"] != "platform" || sts.Annotations["flotilla.io/cert-hash"] != "" {
			t.Errorf("annotations: StatefulSet %v, pod %v", sts.Annotations, tmpl.Annotations)
		}
		if tmpl.Labels["team"] != "platform" || sts.Labels["team"] != "platform" || len(sts.Spec.Selector.MatchLabels) != 2 {
			t.Errorf("labels: StatefulSet %v, pod %v, selector %v", sts.Labels, tmpl.Labels, sts.Spec.Selector.MatchLabels)
		}
		if tmpl.Spec.PriorityClassName != "system-cluster-critical" || tmpl.Spec.Affinity == nil || len(tmpl.Spec.Tolerations) != 1 {
			t.Errorf("pod settings: %+v", tmpl.Spec)
		}
	})

	t.Run("etcd hostPath", func(t *testing.T) {
		objs := mustRender(t, byName(Etcd, "hostPath"))
		sts := objs.statefulSet(t, "demo-etcd")
		if !hasVolume(sts.Spec.Template.Spec.Volumes, "data", func(v corev1.Volume) bool {
			return v.HostPath != nil && v.HostPath.Path == "/var/lib/flotilla/etcd" && *v.HostPath.Type == corev1.HostPathDirectoryOrCreate
		}) {
			t.Errorf("no hostPath data volume: %+v", sts.Spec.Template.Spec.Volumes)
		}
		args := argMap(t, sts.Spec.Template.Spec.Containers[0].Args)
		if want := "https://$(POD_NAME).demo-etcd.flotilla-system.svc.corp.example:2379"; args["advertise-client-urls"] != want {
			t.Errorf("--advertise-client-urls=%s; want %s", args["advertise-client-urls"], want)
		}
	})

	t.Run("apiserver defaults", func(t *testing.T) {
		objs := mustRender(t, byName(APIServer, "defaults"))
		deploy := objs.deployment(t, "demo-apiserver")
		ctr := deploy.Spec.Template.Spec.Containers[0]
		args := argMap(t, ctr.Args)
		for flag, want := range map[string]string{
			"etcd-servers":                "https://demo-etcd-client.flotilla-system.svc.cluster.local:2379",
			"bind-address":                "$(POD_IP)",
			"advertise-address":           "$(POD_IP)",
			"secure-port":                 "5443",
			"authorization-mode":          "RBAC",
			"service-account-issuer":      "https://kubernetes.default.svc.cluster.local",
			"service-cluster-ip-range":    "10.96.0.0/12",
			"endpoint-reconciler-type":    "none",
			"requestheader-allowed-names": "front-proxy-client",
			"etcd-certfile":               "/etc/flotilla/pki/etcd-client.crt",
		} {
			if args[flag] != want {
				t.Errorf("--%s=%s; want %s", flag, args[flag], want)
			}
		}
		if _, ok := args["feature-gates"]; ok {
			t.Error("--feature-gates rendered without featureGates")
		}
		for _, p := range []struct {
			probe *corev1.Probe
			path  string
		}{{ctr.ReadinessProbe, "/readyz"}, {ctr.LivenessProbe, "/livez"}, {ctr.StartupProbe, "/livez"}} {
			if p.probe == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.probe.HTTPGet.Port.String() != "https" {
				t.Errorf("probe %+v; want HTTPS %s on https", p.probe, p.path)
			}
		}
		svc := objs.service(t, "demo-apiserver")
		if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Port != 5443 || svc.Spec.Ports[0].Name != "https" {
			t.Errorf("Service: %+v", svc.Spec)
		}
		if deploy.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			t.Errorf("strategy %q", deploy.Spec.Strategy.Type)
		}
	})

	t.Run("apiserver NodePort", func(t *testing.T) {
		objs := mustRender(t, byName(APIServer, "NodePort, external etcd, flags"))
		deploy := objs.deployment(t, "demo-apiserver")
		spec := deploy.Spec.Template.Spec
		args := argMap(t, spec.Containers[0].Args)
		for flag, want := range map[string]string{
			"etcd-servers":          "https://etcd-a.example:2379,https://etcd-b.example:2379,https://etcd-c.example:2379",
			"feature-gates":         "APIServerIdentity=false,AllAlpha=false",
			"authorization-mode":    "RBAC,Webhook",
			"max-requests-inflight": "800",
		} {
			if args[flag] != want {
				t.Errorf("--%s=%s; want %s", flag, args[flag], want)
			}
		}
		svc := objs.service(t, "demo-apiserver")
		if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort != 32443 {
			t.Errorf("Service: %+v", svc.Spec)
		}
		if len(spec.Containers) != 2 || spec.Containers[1].Name != "kms" || !hasVolume(spec.Volumes, "audit", nil) {
			t.Errorf("sidecar or extra volume missing: %+v", spec)
		}
		if pdb, ok := objs.pdb("demo-apiserver"); !ok || pdb.Spec.MinAvailable.String() != "50%" {
			t.Errorf("PodDisruptionBudget: %+v", pdb)
		}
	})

	t.Run("apiserver LoadBalancer", func(t *testing.T) {
		objs := mustRender(t, byName(APIServer, "LoadBalancer"))
		svc := objs.service(t, "demo-apiserver")
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass == nil ||
			*svc.Spec.LoadBalancerClass != "example.com/lb" || svc.Annotations["example.com/internal"] != "true" {
			t.Errorf("Service: %+v", svc)
		}
		args := argMap(t, objs.deployment(t, "demo-apiserver").Spec.Template.Spec.Containers[0].Args)
		if want := "https://other-etcd-client.flotilla-system.svc.cluster.local:2379"; args["etcd-servers"] != want {
			t.Errorf("--etcd-servers=%s; want %s", args["etcd-servers"], want)
		}
	})

	t.Run("kube-controller-manager defaults", func(t *testing.T) {
		objs := mustRender(t, byName(KubeControllerManager, "defaults"))
		args := argMap(t, objs.deployment(t, "demo-kube-controller-manager").Spec.Template.Spec.Containers[0].Args)
		for flag, want := range map[string]string{
			"controllers":               "namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,clusterrole-aggregation-controller",
			"cluster-name":              "demo",
			"kubeconfig":                "/etc/flotilla/kubeconfig/kubeconfig",
			"authentication-kubeconfig": "/etc/flotilla/kubeconfig/kubeconfig",
			"authorization-kubeconfig":  "/etc/flotilla/kubeconfig/kubeconfig",
			"secure-port":               "10257",
			"leader-elect":              "true",
		} {
			if args[flag] != want {
				t.Errorf("--%s=%s; want %s", flag, args[flag], want)
			}
		}
	})

	t.Run("kube-controller-manager overrides", func(t *testing.T) {
		objs := mustRender(t, byName(KubeControllerManager, "controllers and flags"))
		spec := objs.deployment(t, "demo-kube-controller-manager").Spec.Template.Spec
		args := argMap(t, spec.Containers[0].Args)
		if args["leader-elect"] != "false" || args["feature-gates"] != "AllBeta=false" || args["kube-api-qps"] != "100" {
			t.Errorf("args %v", args)
		}
		secrets := map[string]bool{}
		for _, v := range spec.Volumes {
			secrets[v.Secret.SecretName] = true
		}
		if !secrets["kcm-kubeconfig"] || !secrets["kcm-pki"] {
			t.Errorf("volumes %+v", spec.Volumes)
		}
	})

	for _, chart := range []string{ControllerManager, Scheduler} {
		t.Run(chart+" defaults", func(t *testing.T) {
			objs := mustRender(t, byName(chart, "defaults"))
			deploy := objs.deployment(t, "demo-"+chart)
			ctr := deploy.Spec.Template.Spec.Containers[0]
			want := []string{
				"--health-probe-bind-address=$(POD_IP):8081",
				"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
				"--leader-elect=true",
				"--metrics-bind-address=$(POD_IP):8080",
			}
			if diff := cmp.Diff(want, ctr.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"/flotilla-" + chart}, ctr.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.LivenessProbe.HTTPGet.Path != "/healthz" || containerPort(ctr, "probes") != 8081 {
				t.Errorf("probes: readiness %+v liveness %+v", ctr.ReadinessProbe.HTTPGet, ctr.LivenessProbe.HTTPGet)
			}
			psc := deploy.Spec.Template.Spec.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || *psc.RunAsUser != 65532 {
				t.Errorf("pod securityContext %+v; want non-root 65532", psc)
			}
		})
	}

	t.Run("feature gates of Flotilla's components", func(t *testing.T) {
		c := chartCase{chart: Scheduler, values: map[string]any{"featureGates": map[string]any{"B": true, "A": false}}}
		args := argMap(t, mustRender(t, c).deployment(t, "demo-scheduler").Spec.Template.Spec.Containers[0].Args)
		if args["feature-gates"] != "A=false,B=true" {
			t.Errorf("--feature-gates=%s; want A=false,B=true", args["feature-gates"])
		}
	})

	t.Run("fullnameOverride", func(t *testing.T) {
		c := chartCase{chart: Etcd, values: map[string]any{"fullnameOverride": "store"}}
		objs := mustRender(t, c)
		objs.statefulSet(t, "store")
		objs.service(t, "store")
		objs.service(t, "store-client")
	})
}

// TestValuesValidation: values the charts refuse, with a message that names
// the value.
func TestValuesValidation(t *testing.T) {
	for _, tc := range []struct {
		name, chart string
		values      map[string]any
		want        string
	}{
		{"even etcd", Etcd, map[string]any{"replicas": 2}, "replicas: etcd runs 1 or 3 members, got 2"},
		{"five etcd", Etcd, map[string]any{"replicas": 5}, "replicas: etcd runs 1 or 3 members, got 5"},
		{"two storages", Etcd, map[string]any{"storage": map[string]any{
			"emptyDir": map[string]any{}, "hostPath": map[string]any{"path": "/data"},
		}}, "storage: set only one of emptyDir, hostPath and volumeClaim, got emptyDir, hostPath"},
		{"hostPath without path", Etcd, map[string]any{"storage": map[string]any{"hostPath": map[string]any{"type": "Directory"}}}, "storage.hostPath.path"},
		{"claim without spec", Etcd, map[string]any{"storage": map[string]any{"volumeClaim": map[string]any{"metadata": map[string]any{}}}}, "storage.volumeClaim.spec"},
		{"long etcd name", Etcd, map[string]any{"fullnameOverride": strings.Repeat("e", 53)}, "a StatefulSet name may have at most 52"},
		{"both PDB fields", APIServer, map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 1, "maxUnavailable": 1}}, "podDisruptionBudget: set minAvailable or maxUnavailable, not both"},
		{"service type", APIServer, map[string]any{"service": map[string]any{"type": "ExternalName"}}, `service.type: ClusterIP, NodePort or LoadBalancer, got "ExternalName"`},
		{"no controllers", KubeControllerManager, map[string]any{"controllers": []any{}}, "controllers: list at least one controller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(chartCase{chart: tc.chart, values: tc.values})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// render installs the embedded chart as a client-only dry run, as
// `helm template` does, and returns its manifest.
func render(c chartCase) (string, error) {
	chrt, err := Load(c.chart)
	if err != nil {
		return "", err
	}
	cfg := &action.Configuration{
		Releases:   storage.Init(driver.NewMemory()),
		KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Log:        func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = c.release()
	install.Namespace = testNamespace
	install.KubeVersion = kubeVersion
	rel, err := install.Run(chrt, c.values)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// objects are a release's decoded objects by kind and name.
type objects struct {
	statefulSets map[string]*appsv1.StatefulSet
	deployments  map[string]*appsv1.Deployment
	services     map[string]*corev1.Service
	pdbs         map[string]*policyv1.PodDisruptionBudget
}

func (o objects) statefulSet(t *testing.T, name string) *appsv1.StatefulSet {
	t.Helper()
	s, ok := o.statefulSets[name]
	if !ok {
		t.Fatalf("no StatefulSet %s", name)
	}
	return s
}

func (o objects) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	d, ok := o.deployments[name]
	if !ok {
		t.Fatalf("no Deployment %s", name)
	}
	return d
}

func (o objects) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	s, ok := o.services[name]
	if !ok {
		t.Fatalf("no Service %s", name)
	}
	return s
}

// mainContainer is the first container of the chart's workload.
func (o objects) mainContainer(t *testing.T, c chartCase) corev1.Container {
	t.Helper()
	if c.chart == Etcd {
		return o.statefulSet(t, c.release()).Spec.Template.Spec.Containers[0]
	}
	return o.deployment(t, c.release()).Spec.Template.Spec.Containers[0]
}

func (o objects) pdb(name string) (*policyv1.PodDisruptionBudget, bool) {
	p, ok := o.pdbs[name]
	return p, ok
}

// mustRender renders c and decodes every object strictly: an unknown or
// misspelt field, or a duplicated key, fails.
func mustRender(t *testing.T, c chartCase) objects {
	t.Helper()
	manifest, err := render(c)
	if err != nil {
		t.Fatalf("rendering %s: %v", c.chart, err)
	}
	objs := objects{
		statefulSets: map[string]*appsv1.StatefulSet{},
		deployments:  map[string]*appsv1.Deployment{},
		services:     map[string]*corev1.Service{},
		pdbs:         map[string]*policyv1.PodDisruptionBudget{},
	}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("decoding %s: %v\n%s", c.chart, err, doc)
		}
		if meta.Metadata.Namespace != testNamespace {
			t.Errorf("%s %s: namespace %q; want %q", meta.Kind, meta.Metadata.Name, meta.Metadata.Namespace, testNamespace)
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 StatefulSet":
			s := &appsv1.StatefulSet{}
			objs.statefulSets[meta.Metadata.Name], obj = s, s
		case "apps/v1 Deployment":
			d := &appsv1.Deployment{}
			objs.deployments[meta.Metadata.Name], obj = d, d
		case "v1 Service":
			s := &corev1.Service{}
			objs.services[meta.Metadata.Name], obj = s, s
		case "policy/v1 PodDisruptionBudget":
			p := &policyv1.PodDisruptionBudget{}
			objs.pdbs[meta.Metadata.Name], obj = p, p
		default:
			t.Fatalf("unexpected object %s %s %s", meta.APIVersion, meta.Kind, meta.Metadata.Name)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s %s does not decode strictly: %v\n%s", meta.Kind, meta.Metadata.Name, err, doc)
		}
	}
	return objs
}

// checkWiring checks what every chart's workload must get right: labels and
// selectors, the standard labels, volumes behind every mount, the downward
// API behind $(POD_IP), pods that do not mount a host token, and args given
// once each.
func checkWiring(t *testing.T, c chartCase, objs objects) {
	t.Helper()
	var (
		meta     = map[string]map[string]string{}
		selector map[string]string
		tmpl     corev1.PodTemplateSpec
	)
	switch {
	case c.chart == Etcd:
		sts := objs.statefulSet(t, c.release())
		selector, tmpl = sts.Spec.Selector.MatchLabels, sts.Spec.Template
		meta["StatefulSet"] = sts.Labels
		if sts.Spec.ServiceName != c.release() {
			t.Errorf("serviceName %q; want %q", sts.Spec.ServiceName, c.release())
		}
		for _, name := range []string{c.release(), c.release() + "-client"} {
			svc := objs.service(t, name)
			meta["Service "+name] = svc.Labels
			if diff := cmp.Diff(selector, svc.Spec.Selector); diff != "" {
				t.Errorf("Service %s selector (-workload +service):\n%s", name, diff)
			}
		}
	default:
		deploy := objs.deployment(t, c.release())
		selector, tmpl = deploy.Spec.Selector.MatchLabels, deploy.Spec.Template
		meta["Deployment"] = deploy.Labels
		if deploy.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			t.Errorf("strategy %q; want RollingUpdate", deploy.Spec.Strategy.Type)
		}
		if c.chart == APIServer {
			svc := objs.service(t, c.release())
			meta["Service"] = svc.Labels
			if diff := cmp.Diff(selector, svc.Spec.Selector); diff != "" {
				t.Errorf("Service selector (-workload +service):\n%s", diff)
			}
		}
	}
	for name, pdb := range objs.pdbs {
		meta["PodDisruptionBudget "+name] = pdb.Labels
		if diff := cmp.Diff(selector, pdb.Spec.Selector.MatchLabels); diff != "" {
			t.Errorf("PodDisruptionBudget selector (-workload +pdb):\n%s", diff)
		}
	}
	wantSelector := map[string]string{"app.kubernetes.io/name": c.chart, "app.kubernetes.io/instance": c.release()}
	if diff := cmp.Diff(wantSelector, selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	meta["pod template"] = tmpl.Labels
	for what, labels := range meta {
		for k, v := range map[string]string{
			"app.kubernetes.io/name":       c.chart,
			"app.kubernetes.io/instance":   c.release(),
			"app.kubernetes.io/component":  c.chart,
			"app.kubernetes.io/part-of":    "flotilla",
			"app.kubernetes.io/managed-by": "Helm",
		} {
			if labels[k] != v {
				t.Errorf("%s: label %s=%q; want %q", what, k, labels[k], v)
			}
		}
	}

	spec := tmpl.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("pods mount the host cluster's service-account token")
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	if c.chart == Etcd {
		for _, claim := range objs.statefulSet(t, c.release()).Spec.VolumeClaimTemplates {
			volumes[claim.Name] = true
		}
	}
	main := spec.Containers[0]
	for _, m := range main.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("mount %s has no volume", m.Name)
		}
		if strings.HasPrefix(m.MountPath, "/etc/flotilla/") && !m.ReadOnly {
			t.Errorf("mount %s at %s is writable", m.Name, m.MountPath)
		}
	}
	env := map[string]string{}
	for _, e := range main.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["POD_IP"] != "status.podIP" {
		t.Errorf("POD_IP comes from %q; want status.podIP", env["POD_IP"])
	}
	argMap(t, main.Args) // every arg is --name=value, each name once
	for _, a := range main.Args {
		if strings.Contains(a, "0.0.0.0") || strings.Contains(a, "127.0.0.1") || strings.Contains(a, "localhost") {
			t.Errorf("arg %s binds a fixed address; listeners bind $(POD_IP)", a)
		}
	}
	sc := main.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil ||
		*sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext %+v", sc)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil || spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v; want the RuntimeDefault seccomp profile", spec.SecurityContext)
	}
}

// argMap returns args as flag name to value, failing on an arg that is not
// --name=value or on a flag given twice.
func argMap(t *testing.T, args []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") || name == "" {
			t.Errorf("arg %q is not --name=value", a)
			continue
		}
		if _, dup := m[name]; dup {
			t.Errorf("flag --%s is given twice", name)
		}
		m[name] = value
	}
	return m
}

func hasVolume(volumes []corev1.Volume, name string, match func(corev1.Volume) bool) bool {
	return slices.ContainsFunc(volumes, func(v corev1.Volume) bool {
		return v.Name == name && (match == nil || match(v))
	})
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// TestValuesDocumented: every key of every values.yaml has a comment right
// above it, and every top-level value is listed in the chart's README.
func TestValuesDocumented(t *testing.T) {
	for _, name := range Names() {
		data, err := os.ReadFile(filepath.Join(name, "values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		var top string
		for i, line := range lines {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "-") {
				continue
			}
			indent := len(line) - len(strings.TrimLeft(line, " "))
			if indent == 0 {
				top, _, _ = strings.Cut(trimmed, ":")
			}
			// The fields of securityContexts are Kubernetes', documented
			// there; the chart's own values are at most two levels deep.
			if indent > 2 || (indent > 0 && strings.HasSuffix(top, "ecurityContext")) {
				continue
			}
			if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
				t.Errorf("%s/values.yaml:%d: %q has no comment above it", name, i+1, trimmed)
			}
		}
		readme, err := os.ReadFile(filepath.Join(name, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal(data, &values); err != nil {
			t.Fatal(err)
		}
		for key := range values {
			if !bytes.Contains(readme, []byte("`"+key)) {
				t.Errorf("%s/README.md does not list the value %s", name, key)
			}
		}
	}
}
