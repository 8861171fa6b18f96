package charts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// What particular values turn into, chart by chart.

// caseNamed is the case of chart called name in cases.
func caseNamed(t *testing.T, chart, name string) chartCase {
	t.Helper()
	for _, c := range cases {
		if c.chart == chart && c.name == name {
			return c
		}
	}
	t.Fatalf("no case %s/%s", chart, name)
	return chartCase{}
}

// wantArgs checks the values of some flags in args.
func wantArgs(t *testing.T, args []string, want map[string]string) {
	t.Helper()
	got := argMap(t, args)
	for flag, value := range want {
		if got[flag] != value {
			t.Errorf("--%s=%s; want %s", flag, got[flag], value)
		}
	}
}

// wantProbe checks that probe is an httpGet of path on the named port.
func wantProbe(t *testing.T, what string, probe *corev1.Probe, scheme corev1.URIScheme, port, path string) {
	t.Helper()
	if probe == nil || probe.HTTPGet == nil {
		t.Errorf("%s probe: none; want %s %s on %s", what, scheme, path, port)
		return
	}
	if g := probe.HTTPGet; g.Path != path || g.Scheme != scheme || g.Port.String() != port {
		t.Errorf("%s probe: %s %s on %s; want %s %s on %s", what, g.Scheme, g.Path, g.Port.String(), scheme, path, port)
	}
}

func TestEtcdDefaults(t *testing.T) {
	objs := mustRender(t, caseNamed(t, Etcd, "defaults"))
	sts := objs.statefulSet(t, "demo-etcd")
	ctr := sts.Spec.Template.Spec.Containers[0]
	want := []string{
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
	if diff := cmp.Diff(want, ctr.Args); diff != "" {
		t.Errorf("etcd args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"etcd"}, ctr.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if !hasVolume(sts.Spec.Template.Spec.Volumes, "data", func(v corev1.Volume) bool { return v.EmptyDir != nil }) {
		t.Errorf("data volume is not an emptyDir: %+v", sts.Spec.Template.Spec.Volumes)
	}
	wantProbe(t, "startup", ctr.StartupProbe, corev1.URISchemeHTTP, "metrics", "/livez")
	wantProbe(t, "liveness", ctr.LivenessProbe, corev1.URISchemeHTTP, "metrics", "/livez")
	wantProbe(t, "readiness", ctr.ReadinessProbe, corev1.URISchemeHTTP, "metrics", "/readyz")
	if containerPort(ctr, "metrics") != 2381 || containerPort(ctr, "client") != 2379 || containerPort(ctr, "peer") != 2380 {
		t.Errorf("ports %+v", ctr.Ports)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("podManagementPolicy %q; want Parallel", sts.Spec.PodManagementPolicy)
	}

	headless := objs.service(t, "demo-etcd")
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses || len(headless.Spec.Ports) != 2 {
		t.Errorf("headless Service: %+v", headless.Spec)
	}
	client := objs.service(t, "demo-etcd-client")
	if client.Spec.Type != corev1.ServiceTypeClusterIP || client.Spec.ClusterIP != "" || len(client.Spec.Ports) != 1 || client.Spec.Ports[0].Port != 2379 {
		t.Errorf("client Service: %+v", client.Spec)
	}
	if _, ok := objs.pdb("demo-etcd"); ok {
		t.Error("a PodDisruptionBudget is rendered without podDisruptionBudget values")
	}
}

func TestEtcdThreeMembers(t *testing.T) {
	objs := mustRender(t, caseNamed(t, Etcd, "three members on PVCs"))
	sts := objs.statefulSet(t, "demo-etcd")
	members := make([]string, 0, 3)
	for i := range 3 {
		members = append(members, fmt.Sprintf("demo-etcd-%d=https://demo-etcd-%d.demo-etcd.flotilla-system.svc.cluster.local:2380", i, i))
	}
	wantArgs(t, sts.Spec.Template.Spec.Containers[0].Args, map[string]string{
		"initial-cluster":       strings.Join(members, ","),
		"quota-backend-bytes":   "8589934592",
		"snapshot-count":        "10000",
		"initial-cluster-token": "demo-token",
		"auto-compaction-mode":  "periodic",
	})
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
	if pdb, ok := objs.pdb("demo-etcd"); !ok || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget: %+v", pdb)
	}
}

// TestCommonPodValues: labels, annotations, podAnnotations and the pod
// settings every chart takes, seen on etcd's.
func TestCommonPodValues(t *testing.T) {
	sts := mustRender(t, caseNamed(t, Etcd, "three members on PVCs")).statefulSet(t, "demo-etcd")
	tmpl := sts.Spec.Template
	wantAnnotations := map[string]map[string]string{
		"StatefulSet": {"example.com/owner": "platform"},
		"pod":         {"example.com/owner": "platform", "flotilla.io/cert-hash": "abc123"},
	}
	if diff := cmp.Diff(wantAnnotations, map[string]map[string]string{"StatefulSet": sts.Annotations, "pod": tmpl.Annotations}); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if tmpl.Labels["team"] != "platform" || sts.Labels["team"] != "platform" || len(sts.Spec.Selector.MatchLabels) != 2 {
		t.Errorf("labels: StatefulSet %v, pod %v, selector %v", sts.Labels, tmpl.Labels, sts.Spec.Selector.MatchLabels)
	}
	spec := tmpl.Spec
	if spec.PriorityClassName != "system-cluster-critical" || spec.Affinity == nil || len(spec.Tolerations) != 1 {
		t.Errorf("pod settings: %+v", spec)
	}
	if res := spec.Containers[0].Resources.Requests; res.Cpu().String() != "100m" || res.Memory().String() != "256Mi" {
		t.Errorf("requests %v", res)
	}
}

func TestEtcdHostPath(t *testing.T) {
	sts := mustRender(t, caseNamed(t, Etcd, "hostPath")).statefulSet(t, "demo-etcd")
	if !hasVolume(sts.Spec.Template.Spec.Volumes, "data", func(v corev1.Volume) bool {
		return v.HostPath != nil && v.HostPath.Path == "/var/lib/flotilla/etcd" && *v.HostPath.Type == corev1.HostPathDirectoryOrCreate
	}) {
		t.Errorf("no hostPath data volume: %+v", sts.Spec.Template.Spec.Volumes)
	}
	wantArgs(t, sts.Spec.Template.Spec.Containers[0].Args, map[string]string{
		"advertise-client-urls": "https://$(POD_NAME).demo-etcd.flotilla-system.svc.corp.example:2379",
	})
}

func TestEtcdFullnameOverride(t *testing.T) {
	objs := mustRender(t, chartCase{chart: Etcd, values: map[string]any{"fullnameOverride": "store"}})
	sts := objs.statefulSet(t, "store")
	objs.service(t, "store")
	objs.service(t, "store-client")
	wantArgs(t, sts.Spec.Template.Spec.Containers[0].Args, map[string]string{
		"initial-cluster": "store-0=https://store-0.store.flotilla-system.svc.cluster.local:2380",
	})
}

func TestAPIServerDefaults(t *testing.T) {
	objs := mustRender(t, caseNamed(t, APIServer, "defaults"))
	deploy := objs.deployment(t, "demo-apiserver")
	ctr := deploy.Spec.Template.Spec.Containers[0]
	wantArgs(t, ctr.Args, map[string]string{
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
	})
	if _, ok := argMap(t, ctr.Args)["feature-gates"]; ok {
		t.Error("--feature-gates rendered without featureGates")
	}
	if diff := cmp.Diff([]string{"kube-apiserver"}, ctr.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	wantProbe(t, "startup", ctr.StartupProbe, corev1.URISchemeHTTPS, "https", "/livez")
	wantProbe(t, "liveness", ctr.LivenessProbe, corev1.URISchemeHTTPS, "https", "/livez")
	wantProbe(t, "readiness", ctr.ReadinessProbe, corev1.URISchemeHTTPS, "https", "/readyz")
	svc := objs.service(t, "demo-apiserver")
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Port != 5443 || svc.Spec.Ports[0].Name != "https" {
		t.Errorf("Service: %+v", svc.Spec)
	}
}

func TestAPIServerNodePort(t *testing.T) {
	objs := mustRender(t, caseNamed(t, APIServer, "NodePort, external etcd, flags"))
	spec := objs.deployment(t, "demo-apiserver").Spec.Template.Spec
	wantArgs(t, spec.Containers[0].Args, map[string]string{
		"etcd-servers":          "https://etcd-a.example:2379,https://etcd-b.example:2379,https://etcd-c.example:2379",
		"feature-gates":         "APIServerIdentity=false,AllAlpha=false",
		"authorization-mode":    "RBAC,Webhook",
		"max-requests-inflight": "800",
	})
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
}

func TestAPIServerLoadBalancer(t *testing.T) {
	objs := mustRender(t, caseNamed(t, APIServer, "LoadBalancer"))
	svc := objs.service(t, "demo-apiserver")
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass == nil ||
		*svc.Spec.LoadBalancerClass != "example.com/lb" || svc.Annotations["example.com/internal"] != "true" {
		t.Errorf("Service: %+v", svc)
	}
	wantArgs(t, objs.deployment(t, "demo-apiserver").Spec.Template.Spec.Containers[0].Args, map[string]string{
		"etcd-servers":             "https://other-etcd-client.flotilla-system.svc.cluster.local:2379",
		"service-cluster-ip-range": "10.200.0.0/16",
	})
}

func TestKubeControllerManager(t *testing.T) {
	ctr := mustRender(t, caseNamed(t, KubeControllerManager, "defaults")).deployment(t, "demo-kube-controller-manager").Spec.Template.Spec.Containers[0]
	wantArgs(t, ctr.Args, map[string]string{
		"controllers":               "namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,clusterrole-aggregation-controller",
		"cluster-name":              "demo",
		"kubeconfig":                "/etc/flotilla/kubeconfig/kubeconfig",
		"authentication-kubeconfig": "/etc/flotilla/kubeconfig/kubeconfig",
		"authorization-kubeconfig":  "/etc/flotilla/kubeconfig/kubeconfig",
		"bind-address":              "$(POD_IP)",
		"secure-port":               "10257",
		"leader-elect":              "true",
	})
	wantProbe(t, "liveness", ctr.LivenessProbe, corev1.URISchemeHTTPS, "https", "/healthz")
	wantProbe(t, "readiness", ctr.ReadinessProbe, corev1.URISchemeHTTPS, "https", "/healthz")

	spec := mustRender(t, caseNamed(t, KubeControllerManager, "controllers and flags")).deployment(t, "demo-kube-controller-manager").Spec.Template.Spec
	wantArgs(t, spec.Containers[0].Args, map[string]string{
		"leader-elect":  "false",
		"feature-gates": "AllBeta=false",
		"kube-api-qps":  "100",
		"controllers":   "namespace-controller,garbage-collector-controller,certificatesigningrequest-signing-controller",
	})
	secrets := map[string]string{}
	for _, v := range spec.Volumes {
		secrets[v.Name] = v.Secret.SecretName
	}
	if diff := cmp.Diff(map[string]string{"kubeconfig": "kcm-kubeconfig", "pki": "kcm-pki"}, secrets); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
}

func TestFlotillaComponents(t *testing.T) {
	for _, tc := range []struct {
		chart string
		args  []string
		ports map[string]int32
	}{
		{
			chart: ControllerManager,
			args: []string{
				"--health-probe-bind-address=$(POD_IP):8081",
				"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
				"--leader-elect=true",
				"--leader-elect-resource-namespace=karmada-system",
				"--metrics-bind-address=$(POD_IP):8080",
			},
			ports: map[string]int32{"metrics": 8080, "probes": 8081},
		},
		{
			chart: Scheduler,
			args: []string{
				"--health-probe-bind-address=$(POD_IP):8081",
				"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
				"--leader-elect=true",
				"--leader-elect-resource-namespace=karmada-system",
				"--metrics-bind-address=$(POD_IP):8080",
			},
			ports: map[string]int32{"metrics": 8080, "probes": 8081},
		},
		{
			chart: Descheduler,
			args: []string{
				"--health-probe-bind-address=$(POD_IP):8081",
				"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
				"--leader-elect=true",
				"--leader-elect-resource-namespace=karmada-system",
				"--metrics-bind-address=$(POD_IP):8080",
			},
			ports: map[string]int32{"metrics": 8080, "probes": 8081},
		},
		{
			// Every replica serves: no leader election.
			chart: Webhook,
			args: []string{
				"--bind-address=$(POD_IP)",
				"--cert-dir=/etc/flotilla/pki",
				"--health-probe-bind-address=$(POD_IP):8081",
				"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
				"--metrics-bind-address=$(POD_IP):8080",
				"--secure-port=8443",
				"--tls-cert-file-name=tls.crt",
				"--tls-private-key-file-name=tls.key",
			},
			ports: map[string]int32{"https": 8443, "metrics": 8080, "probes": 8081},
		},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			deploy := mustRender(t, caseNamed(t, tc.chart, "defaults")).deployment(t, "demo-"+tc.chart)
			ctr := deploy.Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff(tc.args, ctr.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"/flotilla-" + tc.chart}, ctr.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			wantProbe(t, "liveness", ctr.LivenessProbe, corev1.URISchemeHTTP, "probes", "/healthz")
			wantProbe(t, "readiness", ctr.ReadinessProbe, corev1.URISchemeHTTP, "probes", "/readyz")
			ports := map[string]int32{}
			for _, p := range ctr.Ports {
				ports[p.Name] = p.ContainerPort
			}
			if diff := cmp.Diff(tc.ports, ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			psc := deploy.Spec.Template.Spec.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
				t.Errorf("pod securityContext %+v; want non-root 65532", psc)
			}
		})
	}

	// The chart renders --feature-gates only when asked to, sorted.
	c := chartCase{chart: Scheduler, values: map[string]any{"featureGates": map[string]any{"B": true, "A": false}}}
	wantArgs(t, mustRender(t, c).deployment(t, "demo-scheduler").Spec.Template.Spec.Containers[0].Args, map[string]string{
		"feature-gates": "A=false,B=true",
	})
}

// TestWebhook: the Service the API server calls, the Secrets behind
// --cert-dir and --kubeconfig, and what the webhook's values turn into.
func TestWebhook(t *testing.T) {
	objs := mustRender(t, caseNamed(t, Webhook, "defaults"))
	deploy := objs.deployment(t, "demo-webhook")
	spec := deploy.Spec.Template.Spec
	svc := objs.service(t, "demo-webhook")
	wantPorts := []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("https"), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(wantPorts, svc.Spec.Ports); diff != "" {
		t.Errorf("Service ports (-want +got):\n%s", diff)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service type %q; want ClusterIP", svc.Spec.Type)
	}
	// The Service's target is the port the admission server listens on.
	if got := containerPort(spec.Containers[0], svc.Spec.Ports[0].TargetPort.String()); got != 8443 {
		t.Errorf("Service targets container port %d; want 8443", got)
	}
	wantMounts := []corev1.VolumeMount{
		{Name: "pki", MountPath: "/etc/flotilla/pki", ReadOnly: true},
		{Name: "kubeconfig", MountPath: "/etc/flotilla/kubeconfig", ReadOnly: true},
	}
	if diff := cmp.Diff(wantMounts, spec.Containers[0].VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pki": "demo-webhook-cert", "kubeconfig": "demo-webhook-kubeconfig"}, secretVolumes(spec.Volumes)); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
	if _, ok := objs.pdb("demo-webhook"); ok {
		t.Error("a PodDisruptionBudget is rendered without podDisruptionBudget values")
	}

	objs = mustRender(t, caseNamed(t, Webhook, "replicated, flags, own Secrets"))
	deploy = objs.deployment(t, "demo-webhook")
	spec = deploy.Spec.Template.Spec
	wantArgs(t, spec.Containers[0].Args, map[string]string{
		"enable-federated-quota-enforcement":   "true",
		"tls-min-version":                      "1.3",
		"default-not-ready-toleration-seconds": "600",
		"graceful-shutdown-timeout":            "45s",
		"kube-api-qps":                         "100",
		"v":                                    "2",
		"cert-dir":                             "/etc/flotilla/pki",
		"secure-port":                          "8443",
	})
	if diff := cmp.Diff(map[string]string{"pki": "webhook-serving", "kubeconfig": "webhook-client"}, secretVolumes(spec.Volumes)); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
	if *deploy.Spec.Replicas != 3 {
		t.Errorf("replicas %d; want 3", *deploy.Spec.Replicas)
	}
	if pdb, ok := objs.pdb("demo-webhook"); !ok || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PodDisruptionBudget: %+v", pdb)
	}
	svc = objs.service(t, "demo-webhook")
	if svc.Labels["team"] != "platform" || len(svc.Annotations) != 0 {
		t.Errorf("Service: labels %v, annotations %v; want the labels value and no annotations", svc.Labels, svc.Annotations)
	}
	wantAnnotations := map[string]map[string]string{
		"Deployment": {"example.com/owner": "platform"},
		"pod":        {"example.com/owner": "platform", "flotilla.io/cert-hash": "abc123"},
	}
	if diff := cmp.Diff(wantAnnotations, map[string]map[string]string{"Deployment": deploy.Annotations, "pod": deploy.Spec.Template.Annotations}); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if spec.PriorityClassName != "system-cluster-critical" || spec.Affinity == nil || len(spec.Tolerations) != 1 || len(spec.NodeSelector) != 1 {
		t.Errorf("pod settings: %+v", spec)
	}
	if res := spec.Containers[0].Resources; res.Requests.Cpu().String() != "50m" || res.Limits.Memory().String() != "256Mi" {
		t.Errorf("resources %+v", res)
	}

	c := chartCase{chart: Webhook, values: map[string]any{"fullnameOverride": "admission"}}
	objs = mustRender(t, c)
	objs.deployment(t, "admission")
	if svc := objs.service(t, "admission"); svc.Spec.Selector["app.kubernetes.io/instance"] != "demo-webhook" {
		t.Errorf("Service selector %v", svc.Spec.Selector)
	}
	if diff := cmp.Diff(map[string]string{"pki": "admission-cert", "kubeconfig": "admission-kubeconfig"}, secretVolumes(objs.deployment(t, "admission").Spec.Template.Spec.Volumes)); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
}

// secretVolumes maps the Secret volumes' names to their Secrets.
func secretVolumes(volumes []corev1.Volume) map[string]string {
	out := map[string]string{}
	for _, v := range volumes {
		if v.Secret != nil {
			out[v.Name] = v.Secret.SecretName
		}
	}
	return out
}

// TestDescheduler: the Secret behind --kubeconfig, extraArgs added to and
// replacing the chart's flags, and the pod values.
func TestDescheduler(t *testing.T) {
	objs := mustRender(t, caseNamed(t, Descheduler, "defaults"))
	deploy := objs.deployment(t, "demo-descheduler")
	spec := deploy.Spec.Template.Spec
	wantMounts := []corev1.VolumeMount{{Name: "kubeconfig", MountPath: "/etc/flotilla/kubeconfig", ReadOnly: true}}
	if diff := cmp.Diff(wantMounts, spec.Containers[0].VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"kubeconfig": "demo-descheduler-kubeconfig"}, secretVolumes(spec.Volumes)); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
	if got := spec.Containers[0].Image; got != "ghcr.io/flotilla-io/descheduler:0.1.0" {
		t.Errorf("image %q", got)
	}
	if *deploy.Spec.Replicas != 1 {
		t.Errorf("replicas %d; want 1", *deploy.Spec.Replicas)
	}
	if _, ok := objs.pdb("demo-descheduler"); ok {
		t.Error("a PodDisruptionBudget is rendered without podDisruptionBudget values")
	}

	objs = mustRender(t, caseNamed(t, Descheduler, "flags"))
	deploy = objs.deployment(t, "demo-descheduler")
	spec = deploy.Spec.Template.Spec
	want := []string{
		"--descheduling-interval=5m",
		"--health-probe-bind-address=$(POD_IP):8081",
		"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--leader-elect=true",
		// extraArgs replaces the chart's value rather than repeating the flag.
		"--leader-elect-resource-namespace=flotilla-system",
		"--metrics-bind-address=$(POD_IP):8080",
		"--scheduler-estimator-service-prefix=estimator",
		"--scheduler-estimator-timeout=5s",
		"--unschedulable-threshold=10m",
		"--workers=8",
	}
	if diff := cmp.Diff(want, spec.Containers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"kubeconfig": "descheduler-client"}, secretVolumes(spec.Volumes)); diff != "" {
		t.Errorf("secret volumes (-want +got):\n%s", diff)
	}
	if *deploy.Spec.Replicas != 2 {
		t.Errorf("replicas %d; want 2", *deploy.Spec.Replicas)
	}
	if pdb, ok := objs.pdb("demo-descheduler"); !ok || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget: %+v", pdb)
	}
	if deploy.Labels["team"] != "platform" || deploy.Spec.Template.Labels["team"] != "platform" {
		t.Errorf("labels: Deployment %v, pod %v", deploy.Labels, deploy.Spec.Template.Labels)
	}
	if got := deploy.Spec.Template.Annotations["flotilla.io/cert-hash"]; got != "abc123" || deploy.Annotations["flotilla.io/cert-hash"] != "" {
		t.Errorf("annotations: Deployment %v, pod %v; want the hash on the pod only", deploy.Annotations, deploy.Spec.Template.Annotations)
	}
	if got := spec.Containers[0].Resources.Limits.Memory().String(); got != "256Mi" {
		t.Errorf("memory limit %s", got)
	}
}
