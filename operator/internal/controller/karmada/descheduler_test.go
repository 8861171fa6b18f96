package karmada

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/config/rbac"
	"github.com/flotilla-io/flotilla/operator/charts"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// testRelease is the release the values are computed for.
var testRelease = versions.Release{Version: "v0.3.0", Kubernetes: "v1.37.2", Etcd: "3.6.16-0"}

func karmadaWith(comps *operatorv1alpha1.KarmadaComponents) *operatorv1alpha1.Karmada {
	return &operatorv1alpha1.Karmada{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "fleet"},
		Spec:       operatorv1alpha1.KarmadaSpec{Components: comps},
	}
}

// TestDeschedulerPresence: the descheduler runs only when the spec has
// spec.components.karmadaDescheduler, in the controllers phase; without it,
// that phase removes its release. Every release an instance can have is a
// chart the operator embeds, and deletion goes through all of them.
func TestDeschedulerPresence(t *testing.T) {
	for _, tc := range []struct {
		name       string
		comps      *operatorv1alpha1.KarmadaComponents
		run, gone  []Component
		unsupports []string
	}{
		{
			name: "no components",
			run:  []Component{KubeControllerManager, ControllerManager, Scheduler, Webhook},
			gone: []Component{Descheduler},
		},
		{
			name:  "no descheduler",
			comps: &operatorv1alpha1.KarmadaComponents{KarmadaScheduler: &operatorv1alpha1.KarmadaScheduler{}},
			run:   []Component{KubeControllerManager, ControllerManager, Scheduler, Webhook},
			gone:  []Component{Descheduler},
		},
		{
			name:  "empty descheduler",
			comps: &operatorv1alpha1.KarmadaComponents{KarmadaDescheduler: &operatorv1alpha1.KarmadaDescheduler{}},
			run:   []Component{KubeControllerManager, ControllerManager, Scheduler, Descheduler, Webhook},
		},
		{
			name: "Karmada's descheduler image",
			comps: &operatorv1alpha1.KarmadaComponents{KarmadaDescheduler: &operatorv1alpha1.KarmadaDescheduler{
				CommonSettings: operatorv1alpha1.CommonSettings{Image: operatorv1alpha1.Image{ImageRepository: "docker.io/karmada/karmada-descheduler", ImageTag: "v1.14.0"}},
			}},
			run:        []Component{KubeControllerManager, ControllerManager, Scheduler, Descheduler, Webhook},
			unsupports: []string{"spec.components.karmadaDescheduler.imageRepository (a Karmada image; Flotilla's is used)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := karmadaWith(tc.comps)
			var controllers *phase
			for _, ph := range phases(k) {
				if slices.Contains(ph.components, Scheduler) {
					controllers = &ph
				}
				if ph.name != "controllers" && (slices.Contains(ph.components, Descheduler) || slices.Contains(ph.remove, Descheduler)) {
					t.Errorf("phase %q installs or removes the descheduler", ph.name)
				}
			}
			if controllers == nil {
				t.Fatal("no phase runs the scheduler")
			}
			if diff := cmp.Diff(tc.run, controllers.components); diff != "" {
				t.Errorf("controllers phase runs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.gone, controllers.remove); diff != "" {
				t.Errorf("controllers phase removes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unsupports, unsupported(k)); diff != "" {
				t.Errorf("unsupported fields (-want +got):\n%s", diff)
			}
		})
	}

	names := make([]string, 0, len(allComponents()))
	for _, c := range allComponents() {
		names = append(names, string(c))
	}
	if diff := cmp.Diff(charts.Names(), names); diff != "" {
		t.Errorf("releases an instance can have, against the embedded charts (-charts +releases):\n%s", diff)
	}
}

// TestDeschedulerValues: the chart's values come from the descheduler's
// CommonSettings and extraArgs, with Flotilla's image in place of
// Karmada's, the instance's kubeconfig Secret and the certificate hash that
// rolls its pods.
func TestDeschedulerValues(t *testing.T) {
	in := &inputs{target: testRelease, domain: "cluster.local", hashes: map[Component]string{Descheduler: "d35c", Scheduler: "5c4e"}}
	for _, tc := range []struct {
		name     string
		registry string
		d        operatorv1alpha1.KarmadaDescheduler
		want     map[string]any
	}{
		{
			name: "defaults",
			want: map[string]any{
				"image":    map[string]any{"repository": "ghcr.io/flotilla-io/descheduler", "tag": "v0.3.0", "pullPolicy": "IfNotPresent"},
				"replicas": int64(1),
			},
		},
		{
			name: "Karmada's image, replicas, flags",
			d: operatorv1alpha1.KarmadaDescheduler{
				CommonSettings: operatorv1alpha1.CommonSettings{
					Image:           operatorv1alpha1.Image{ImageRepository: "docker.io/karmada/karmada-descheduler", ImageTag: "v1.14.0"},
					ImagePullPolicy: corev1.PullAlways,
					Replicas:        ptr.To[int32](2),
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceMemory: resource.MustParse("256Mi"),
					}},
					PodDisruptionBudgetConfig: &operatorv1alpha1.PodDisruptionBudgetConfig{MinAvailable: ptr.To(intstr.FromInt32(1))},
				},
				ExtraArgs: map[string]string{"descheduling-interval": "5m", "unschedulable-threshold": "10m"},
			},
			want: map[string]any{
				"image":               map[string]any{"repository": "ghcr.io/flotilla-io/descheduler", "tag": "v0.3.0", "pullPolicy": "Always"},
				"replicas":            int64(2),
				"extraArgs":           map[string]any{"descheduling-interval": "5m", "unschedulable-threshold": "10m"},
				"resources":           map[string]any{"limits": map[string]any{"memory": "256Mi"}},
				"podDisruptionBudget": map[string]any{"minAvailable": float64(1)},
			},
		},
		{
			name: "a mirror of Flotilla's image",
			d: operatorv1alpha1.KarmadaDescheduler{CommonSettings: operatorv1alpha1.CommonSettings{
				Image: operatorv1alpha1.Image{ImageRepository: "mirror.example/flotilla/descheduler", ImageTag: "v0.3.0-patched"},
			}},
			want: map[string]any{
				"image":    map[string]any{"repository": "mirror.example/flotilla/descheduler", "tag": "v0.3.0-patched", "pullPolicy": "IfNotPresent"},
				"replicas": int64(1),
			},
		},
		{
			name:     "private registry",
			registry: "registry.corp.example/flotilla",
			want: map[string]any{
				"image":    map[string]any{"repository": "registry.corp.example/flotilla/descheduler", "tag": "v0.3.0", "pullPolicy": "IfNotPresent"},
				"replicas": int64(1),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := karmadaWith(&operatorv1alpha1.KarmadaComponents{KarmadaDescheduler: &tc.d})
			if tc.registry != "" {
				k.Spec.PrivateRegistry = &operatorv1alpha1.ImageRegistry{Registry: tc.registry}
			}
			v, err := chartValues(k, in, Descheduler)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"clusterDomain":       "cluster.local",
				"podAnnotations":      map[string]any{operatorv1alpha1.AnnotationCertificateHash: "d35c"},
				"kubeconfigSecret":    "fleet-descheduler-kubeconfig",
				"extraArgs":           map[string]any{},
				"labels":              map[string]any{},
				"annotations":         map[string]any{},
				"resources":           map[string]any{},
				"affinity":            map[string]any{},
				"tolerations":         []any{},
				"priorityClassName":   "",
				"podDisruptionBudget": map[string]any{},
			}
			for key, value := range tc.want {
				want[key] = value
			}
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeschedulerWiring renders the embedded chart with the operator's
// values and follows what the pod mounts to the Secret the operator
// composes: a kubeconfig of the instance's API server whose client
// certificate is the descheduler's own identity.
func TestDeschedulerWiring(t *testing.T) {
	k := karmadaWith(&operatorv1alpha1.KarmadaComponents{KarmadaDescheduler: &operatorv1alpha1.KarmadaDescheduler{
		ExtraArgs: map[string]string{"workers": "8", "leader-elect-resource-namespace": "flotilla-system"},
	}})
	p := testPKI(t, k)
	secrets, err := consumerSecrets(k.Name, k.Namespace, "cluster.local", p, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &inputs{target: testRelease, domain: "cluster.local", pki: p, hashes: certificateHashes(k.Name, secrets)}
	values, err := chartValues(k, in, Descheduler)
	if err != nil {
		t.Fatal(err)
	}
	deploy := renderDeployment(t, k, Descheduler, values)

	ctr := deploy.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--health-probe-bind-address=$(POD_IP):8081",
		"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--leader-elect=true",
		"--leader-elect-resource-namespace=flotilla-system",
		"--metrics-bind-address=$(POD_IP):8080",
		"--workers=8",
	}
	if diff := cmp.Diff(wantArgs, ctr.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if ctr.Image != "ghcr.io/flotilla-io/descheduler:v0.3.0" {
		t.Errorf("image %s", ctr.Image)
	}
	if got := deploy.Spec.Template.Annotations[operatorv1alpha1.AnnotationCertificateHash]; got == "" || got != in.hashes[Descheduler] || got == in.hashes[Scheduler] {
		t.Errorf("certificate hash %q; want the descheduler's own %q", got, in.hashes[Descheduler])
	}

	var secretName string
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Name == "kubeconfig" && v.Secret != nil {
			secretName = v.Secret.SecretName
		}
	}
	data, ok := secrets[secretName]
	if !ok {
		t.Fatalf("the pod mounts Secret %q, which the operator does not write", secretName)
	}
	cfg, err := clientcmd.Load(data[keyKubeconfig])
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	if cluster.Server != "https://fleet-apiserver.flotilla-system.svc.cluster.local:5443" {
		t.Errorf("server %s", cluster.Server)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	block, _ := pem.Decode(user.ClientCertificateData)
	if block == nil {
		t.Fatal("the kubeconfig has no client certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:flotilla:descheduler" || len(cert.Subject.Organization) != 0 {
		t.Errorf("client certificate of %s, groups %v; want system:flotilla:descheduler and no group", cert.Subject.CommonName, cert.Subject.Organization)
	}
	if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) || slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		t.Errorf("key usages %v; want client authentication only", cert.ExtKeyUsage)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(cluster.CertificateAuthorityData)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the client certificate does not verify against the kubeconfig's CA: %v", err)
	}
}

// TestDeschedulerRBAC: what the operator applies to every instance's API
// server binds the descheduler's identity, and only it, to the ClusterRole
// generated from the descheduler's RBAC markers, unchanged.
func TestDeschedulerRBAC(t *testing.T) {
	static, err := parseContents()
	if err != nil {
		t.Fatal(err)
	}
	data, err := rbac.Roles.ReadFile("descheduler/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	generated := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, generated); err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, obj := range static.objects("https://fleet-webhook.flotilla-system.svc:443", []byte("ca")) {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			if o.Name == "flotilla-descheduler" {
				role = o
			}
		case *rbacv1.ClusterRoleBinding:
			if o.Name == "flotilla-descheduler" {
				binding = o
			}
			for _, s := range o.Subjects {
				if s.Name == certs.DeschedulerUser && o.RoleRef.Name != "flotilla-descheduler" {
					t.Errorf("ClusterRoleBinding %s also binds the descheduler, to %s", o.Name, o.RoleRef.Name)
				}
			}
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("the contents have no flotilla-descheduler ClusterRole (%v) or binding (%v)", role != nil, binding != nil)
	}
	if len(generated.Rules) == 0 {
		t.Fatal("config/rbac/descheduler/role.yaml has no rules")
	}
	if diff := cmp.Diff(generated.Rules, role.Rules); diff != "" {
		t.Errorf("ClusterRole rules, against config/rbac/descheduler (-generated +applied):\n%s", diff)
	}
	wantBinding := rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla-descheduler"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "flotilla-descheduler"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "system:flotilla:descheduler"}},
	}
	if diff := cmp.Diff(wantBinding, *binding); diff != "" {
		t.Errorf("ClusterRoleBinding (-want +got):\n%s", diff)
	}
}

// testPKI issues an instance's whole certificate set in memory, as
// ensurePKI does into Secrets.
func testPKI(t *testing.T, k *operatorv1alpha1.Karmada) *pki {
	t.Helper()
	p := &pki{cas: map[certs.ID]*certs.CA{}, bundles: map[certs.ID][]byte{}, pairs: map[certs.ID]certs.KeyPair{}}
	params := certs.Params{Name: k.Name, Namespace: k.Namespace, DNSDomain: "cluster.local", EtcdReplicas: 1,
		ServiceSubnet: netip.MustParsePrefix(defaultServiceSubnet)}
	for _, spec := range certs.Plan(params) {
		if spec.IsCA() {
			ca, err := certs.NewCA(spec.CAOptions())
			if err != nil {
				t.Fatal(err)
			}
			p.cas[spec.ID], p.bundles[spec.ID] = ca, ca.BundlePEM()
			continue
		}
		pair, _, err := p.cas[spec.Signer].Issue(spec.Request)
		if err != nil {
			t.Fatalf("issuing %s: %v", spec.ID, err)
		}
		p.pairs[spec.ID] = pair
	}
	sa, err := certs.NewServiceAccountKey("")
	if err != nil {
		t.Fatal(err)
	}
	p.sa = sa
	return p
}

// renderDeployment renders a component's embedded chart with values, as
// `helm template` does, and returns its Deployment.
func renderDeployment(t *testing.T, k *operatorv1alpha1.Karmada, c Component, values map[string]any) *appsv1.Deployment {
	t.Helper()
	ch, err := charts.Load(string(c))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{
		Releases:   storage.Init(driver.NewMemory()),
		KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Log:        func(string, ...any) {},
	})
	install.DryRun, install.ClientOnly = true, true
	install.ReleaseName, install.Namespace = releaseName(k.Name, c), k.Namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	rel, err := install.Run(ch, values)
	if err != nil {
		t.Fatalf("rendering chart %s: %v", c, err)
	}
	for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		if kind.Kind != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := yaml.UnmarshalStrict([]byte(doc), d); err != nil {
			t.Fatalf("Deployment does not decode strictly: %v", err)
		}
		return d
	}
	t.Fatalf("chart %s renders no Deployment", c)
	return nil
}

// TestDeschedulerValidation: flags the descheduler would refuse at start
// are reported on the field instead, and what it takes passes.
func TestDeschedulerValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]string
		want []string
	}{
		{name: "none"},
		{name: "valid", args: map[string]string{"descheduling-interval": "90s", "unschedulable-threshold": "0s", "workers": "8"}},
		{
			name: "not durations",
			args: map[string]string{"descheduling-interval": "2", "unschedulable-threshold": "soon"},
			want: []string{
				`spec.components.karmadaDescheduler.extraArgs[descheduling-interval]: Invalid value: "2": must be a duration, e.g. "2m" or "90s"`,
				`spec.components.karmadaDescheduler.extraArgs[unschedulable-threshold]: Invalid value: "soon": must be a duration, e.g. "2m" or "90s"`,
			},
		},
		{
			name: "out of range",
			args: map[string]string{"descheduling-interval": "0s", "unschedulable-threshold": "-1m"},
			want: []string{
				`spec.components.karmadaDescheduler.extraArgs[descheduling-interval]: Invalid value: "0s": must be positive`,
				`spec.components.karmadaDescheduler.extraArgs[unschedulable-threshold]: Invalid value: "-1m": must not be negative`,
			},
		},
		{
			name: "flag name with dashes",
			args: map[string]string{"--workers": "8"},
			want: []string{`spec.components.karmadaDescheduler.extraArgs[--workers]: Invalid value: "--workers": must be a flag name without leading dashes, e.g. "v" or "audit-log-path"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := karmadaWith(&operatorv1alpha1.KarmadaComponents{KarmadaDescheduler: &operatorv1alpha1.KarmadaDescheduler{ExtraArgs: tc.args}})
			var got []string
			for _, err := range validate(k) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
