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
		// The binary must take them: the flags test runs it with these args.
		"featureGates": map[string]any{"Failover": true, "GracefulEviction": false},
	}},

	{name: "defaults", chart: Scheduler},
	{name: "flags", chart: Scheduler, values: map[string]any{
		"extraArgs": map[string]any{"workers": 32, "scheduler-name": "default-scheduler"},
		"resources": map[string]any{"limits": map[string]any{"memory": "512Mi"}},
	}},

	{name: "defaults", chart: Descheduler},
	{name: "flags", chart: Descheduler, values: map[string]any{
		"replicas": 2,
		"extraArgs": map[string]any{
			"descheduling-interval":              "5m",
			"unschedulable-threshold":            "10m",
			"workers":                            8,
			"--scheduler-estimator-timeout":      "5s",
			"scheduler-estimator-service-prefix": "estimator",
			"leader-elect-resource-namespace":    "flotilla-system",
		},
		"kubeconfigSecret":    "descheduler-client",
		"labels":              map[string]any{"team": "platform"},
		"podAnnotations":      map[string]any{"flotilla.io/cert-hash": "abc123"},
		"resources":           map[string]any{"limits": map[string]any{"memory": "256Mi"}},
		"podDisruptionBudget": map[string]any{"maxUnavailable": 1},
	}},

	{name: "defaults", chart: AggregatedAPIServer},
	{name: "replicated, flags, external etcd", chart: AggregatedAPIServer, values: map[string]any{
		"replicas":            2,
		"podDisruptionBudget": map[string]any{"minAvailable": 1},
		"etcd":                map[string]any{"servers": []any{"https://etcd-a.example:2379", "https://etcd-b.example:2379"}, "prefix": "/flotilla"},
		"featureGates":        map[string]any{"APIResponseCompression": false},
		"extraArgs": map[string]any{
			"kube-api-qps":   100,
			"audit-log-path": "-",
			"--v":            2,
		},
		"certSecret":       "aggregated-serving",
		"kubeconfigSecret": "aggregated-client",
		"resources":        map[string]any{"limits": map[string]any{"memory": "256Mi"}},
	}},

	{name: "defaults", chart: Webhook},
	{name: "replicated, flags, own Secrets", chart: Webhook, values: map[string]any{
		"replicas":            3,
		"podDisruptionBudget": map[string]any{"minAvailable": 2},
		"extraArgs": map[string]any{
			"enable-federated-quota-enforcement":   true,
			"tls-min-version":                      "1.3",
			"default-not-ready-toleration-seconds": 600,
			"graceful-shutdown-timeout":            "45s",
			"--kube-api-qps":                       100.0, // a whole float64, as YAML gives it
			"v":                                    2,
		},
		"certSecret":        "webhook-serving",
		"kubeconfigSecret":  "webhook-client",
		"labels":            map[string]any{"team": "platform"},
		"annotations":       map[string]any{"example.com/owner": "platform"},
		"podAnnotations":    map[string]any{"flotilla.io/cert-hash": "abc123"},
		"resources":         map[string]any{"requests": map[string]any{"cpu": "50m"}, "limits": map[string]any{"memory": "256Mi"}},
		"nodeSelector":      map[string]any{"node-role.kubernetes.io/control-plane": ""},
		"tolerations":       []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"priorityClassName": "system-cluster-critical",
		"affinity": map[string]any{"podAntiAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"topologyKey":   "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "demo-webhook"}},
			}},
		}},
	}},
}

func TestNamesAndLoad(t *testing.T) {
	want := []string{"etcd", "apiserver", "aggregated-apiserver", "kube-controller-manager", "controller-manager", "scheduler", "descheduler", "webhook"}
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
	if _, err := Load("search"); err == nil {
		t.Error(`Load("search") succeeded; want an error`)
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
		{"descheduler PDB", Descheduler, map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 1, "maxUnavailable": 1}}, "podDisruptionBudget: set minAvailable or maxUnavailable, not both"},
		{"long descheduler name", Descheduler, map[string]any{"fullnameOverride": strings.Repeat("d", 64)}, "names may have at most 63"},
		{"webhook PDB", Webhook, map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 1, "maxUnavailable": 1}}, "podDisruptionBudget: set minAvailable or maxUnavailable, not both"},
		{"long webhook name", Webhook, map[string]any{"fullnameOverride": strings.Repeat("w", 64)}, "names may have at most 63"},
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

// checkWiring checks what every chart's workload must get right: selectors
// that match, the standard labels, and a pod that is wired and locked down.
func checkWiring(t *testing.T, c chartCase, objs objects) {
	t.Helper()
	workload := workloadOf(t, c, objs)
	wantSelector := map[string]string{"app.kubernetes.io/name": c.chart, "app.kubernetes.io/instance": c.release()}
	if diff := cmp.Diff(wantSelector, workload.selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	// Services and PodDisruptionBudgets select the workload's pods.
	selectors := map[string]map[string]string{}
	for name, svc := range objs.services {
		workload.labels["Service "+name] = svc.Labels
		selectors["Service "+name] = svc.Spec.Selector
	}
	for name, pdb := range objs.pdbs {
		workload.labels["PodDisruptionBudget "+name] = pdb.Labels
		selectors["PodDisruptionBudget "+name] = pdb.Spec.Selector.MatchLabels
	}
	for what, selector := range selectors {
		if diff := cmp.Diff(workload.selector, selector); diff != "" {
			t.Errorf("%s selector (-workload +got):\n%s", what, diff)
		}
	}
	checkLabels(t, c, workload.labels, workload.pod.Labels)
	checkPod(t, workload.pod.Spec, workload.claims)
}

// workload is what checkWiring needs of a StatefulSet or a Deployment.
type workload struct {
	selector map[string]string
	labels   map[string]map[string]string // of every object, by kind and name
	pod      corev1.PodTemplateSpec
	claims   []corev1.PersistentVolumeClaim
}

func workloadOf(t *testing.T, c chartCase, objs objects) workload {
	t.Helper()
	if c.chart == Etcd {
		sts := objs.statefulSet(t, c.release())
		if sts.Spec.ServiceName != c.release() {
			t.Errorf("serviceName %q; want %q", sts.Spec.ServiceName, c.release())
		}
		objs.service(t, c.release())
		objs.service(t, c.release()+"-client")
		return workload{
			selector: sts.Spec.Selector.MatchLabels,
			labels:   map[string]map[string]string{"StatefulSet": sts.Labels},
			pod:      sts.Spec.Template,
			claims:   sts.Spec.VolumeClaimTemplates,
		}
	}
	deploy := objs.deployment(t, c.release())
	if deploy.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("strategy %q; want RollingUpdate", deploy.Spec.Strategy.Type)
	}
	if c.chart == APIServer || c.chart == Webhook {
		objs.service(t, c.release())
	}
	return workload{
		selector: deploy.Spec.Selector.MatchLabels,
		labels:   map[string]map[string]string{"Deployment": deploy.Labels},
		pod:      deploy.Spec.Template,
	}
}

// checkLabels: every object and the pods carry the standard labels; the
// objects also helm.sh/chart, the pods not, so that a new chart version alone
// restarts no pod.
func checkLabels(t *testing.T, c chartCase, objects map[string]map[string]string, pod map[string]string) {
	t.Helper()
	standard := map[string]string{
		"app.kubernetes.io/name":       c.chart,
		"app.kubernetes.io/instance":   c.release(),
		"app.kubernetes.io/component":  c.chart,
		"app.kubernetes.io/part-of":    "flotilla",
		"app.kubernetes.io/managed-by": "Helm",
	}
	for what, labels := range objects {
		if labels["helm.sh/chart"] != c.chart+"-0.1.0" {
			t.Errorf("%s: label helm.sh/chart=%q", what, labels["helm.sh/chart"])
		}
		for k, v := range standard {
			if labels[k] != v {
				t.Errorf("%s: label %s=%q; want %q", what, k, labels[k], v)
			}
		}
	}
	for k, v := range standard {
		if pod[k] != v {
			t.Errorf("pod template: label %s=%q; want %q", k, pod[k], v)
		}
	}
	if v, ok := pod["helm.sh/chart"]; ok {
		t.Errorf("pod template has label helm.sh/chart=%s", v)
	}
}

// checkPod: volumes behind every mount, secrets mounted read-only, the
// downward API behind $(POD_IP), no fixed listen address, args given once
// each, no host token, and the securityContexts.
func checkPod(t *testing.T, spec corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("pods mount the host cluster's service-account token")
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, claim := range claims {
		volumes[claim.Name] = true
	}
	ctr := spec.Containers[0]
	for _, m := range ctr.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("mount %s has no volume", m.Name)
		}
		if strings.HasPrefix(m.MountPath, "/etc/flotilla/") && !m.ReadOnly {
			t.Errorf("mount %s at %s is writable", m.Name, m.MountPath)
		}
	}
	if !slices.ContainsFunc(ctr.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP"
	}) {
		t.Errorf("POD_IP does not come from status.podIP: %+v", ctr.Env)
	}
	argMap(t, ctr.Args) // every arg is --name=value, each name once
	for _, a := range ctr.Args {
		if strings.Contains(a, "0.0.0.0") || strings.Contains(a, "127.0.0.1") || strings.Contains(a, "localhost") {
			t.Errorf("arg %s binds a fixed address; listeners bind $(POD_IP)", a)
		}
	}
	want := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if diff := cmp.Diff(want, ctr.SecurityContext); diff != "" {
		t.Errorf("container securityContext (-want +got):\n%s", diff)
	}
	if psc := spec.SecurityContext; psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v; want the RuntimeDefault seccomp profile", psc)
	}
}

func ptr[T any](v T) *T { return &v }

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
