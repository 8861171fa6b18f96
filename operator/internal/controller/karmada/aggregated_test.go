package karmada

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/config/rbac"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// TestAggregatedAPIServerPhase: every instance gets the aggregated API
// server, as with Karmada's operator, in a phase of its own after the API
// server's contents (its RBAC and karmada-system) and before the
// controllers, which read Clusters through it; the phase registers it.
func TestAggregatedAPIServerPhase(t *testing.T) {
	for _, comps := range []*operatorv1alpha1.KarmadaComponents{
		nil,
		{KarmadaAggregatedAPIServer: &operatorv1alpha1.KarmadaAggregatedAPIServer{}},
	} {
		var names []string
		for _, ph := range phases(karmadaWith(comps)) {
			names = append(names, ph.name)
			if slices.Contains(ph.components, AggregatedAPIServer) != (ph.name == "aggregated API server") || ph.aggregation != (ph.name == "aggregated API server") {
				t.Errorf("phase %q: components %v, aggregation %v", ph.name, ph.components, ph.aggregation)
			}
		}
		want := []string{"etcd", "API server", "API server contents", "aggregated API server", "controllers", "admission webhooks"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("phases (-want +got):\n%s", diff)
		}
	}
	// Karmada's sample names Karmada's image: reported, and replaced.
	k := karmadaWith(&operatorv1alpha1.KarmadaComponents{KarmadaAggregatedAPIServer: &operatorv1alpha1.KarmadaAggregatedAPIServer{
		CommonSettings: operatorv1alpha1.CommonSettings{Image: operatorv1alpha1.Image{ImageRepository: "docker.io/karmada/karmada-aggregated-apiserver", ImageTag: "v1.14.0"}},
	}})
	if diff := cmp.Diff([]string{"spec.components.karmadaAggregatedAPIServer.imageRepository (a Karmada image; Flotilla's is used)"}, unsupported(k)); diff != "" {
		t.Errorf("unsupported (-want +got):\n%s", diff)
	}
}

// TestAggregatedAPIServerValues: the spec's replicas, resources, extraArgs,
// feature gates and image reach the chart; etcd is the instance's, or the
// external one, under the API server's prefix.
func TestAggregatedAPIServerValues(t *testing.T) {
	in := &inputs{target: testRelease, domain: "cluster.local", hashes: map[Component]string{AggregatedAPIServer: "a66", APIServer: "a91"}}
	for _, tc := range []struct {
		name      string
		comps     *operatorv1alpha1.KarmadaComponents
		wantImage map[string]any
		wantEtcd  map[string]any
		wantArgs  any
		replicas  int64
	}{
		{
			name:      "defaults",
			wantImage: map[string]any{"repository": "ghcr.io/flotilla-io/aggregated-apiserver", "tag": "v0.3.0", "pullPolicy": "IfNotPresent"},
			wantEtcd:  map[string]any{"servers": []any{"https://fleet-etcd-client.flotilla-system.svc.cluster.local:2379"}, "prefix": "/registry"},
			wantArgs:  map[string]any{},
			replicas:  1,
		},
		{
			name: "everything set, external etcd, Karmada's image",
			comps: &operatorv1alpha1.KarmadaComponents{
				Etcd: &operatorv1alpha1.Etcd{External: &operatorv1alpha1.ExternalEtcd{
					Endpoints: []string{"https://etcd.example:2379"}, SecretRef: operatorv1alpha1.LocalSecretReference{Name: "etcd-client"},
				}},
				KarmadaAPIServer: &operatorv1alpha1.KarmadaAPIServer{ExtraArgs: map[string]string{"etcd-prefix": "/fleet"}},
				KarmadaAggregatedAPIServer: &operatorv1alpha1.KarmadaAggregatedAPIServer{
					CommonSettings: operatorv1alpha1.CommonSettings{
						Replicas:  ptr.To[int32](2),
						Image:     operatorv1alpha1.Image{ImageRepository: "docker.io/karmada/karmada-aggregated-apiserver", ImageTag: "v1.14.0"},
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
					},
					ExtraArgs:    map[string]string{"kube-api-qps": "100"},
					FeatureGates: map[string]bool{"APIResponseCompression": false},
				},
			},
			wantImage: map[string]any{"repository": "ghcr.io/flotilla-io/aggregated-apiserver", "tag": "v0.3.0", "pullPolicy": "IfNotPresent"},
			wantEtcd:  map[string]any{"servers": []any{"https://etcd.example:2379"}, "prefix": "/fleet"},
			wantArgs:  map[string]any{"kube-api-qps": "100"},
			replicas:  2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := chartValues(karmadaWith(tc.comps), in, AggregatedAPIServer)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantImage, v["image"]); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEtcd, v["etcd"]); diff != "" {
				t.Errorf("etcd (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantArgs, v["extraArgs"]); diff != "" {
				t.Errorf("extraArgs (-want +got):\n%s", diff)
			}
			if v["replicas"] != tc.replicas {
				t.Errorf("replicas %v, want %d", v["replicas"], tc.replicas)
			}
			if v["certSecret"] != "fleet-aggregated-apiserver-cert" || v["kubeconfigSecret"] != "fleet-aggregated-apiserver-kubeconfig" {
				t.Errorf("Secrets %v and %v", v["certSecret"], v["kubeconfigSecret"])
			}
			if got := v["podAnnotations"].(map[string]any)[operatorv1alpha1.AnnotationCertificateHash]; got != "a66" {
				t.Errorf("certificate hash %v; want the aggregated API server's own", got)
			}
		})
	}
}

// TestAggregatedAPIServerWiring renders the embedded chart with the
// operator's values and follows what the pod mounts to the Secrets the
// operator composes: a serving certificate the control plane's API server
// accepts for karmada-aggregated-apiserver.karmada-system.svc (the name it
// verifies) with the CA it puts in the APIService, etcd's client
// certificate, and a kubeconfig of the server's own identity.
func TestAggregatedAPIServerWiring(t *testing.T) {
	k := karmadaWith(&operatorv1alpha1.KarmadaComponents{KarmadaAggregatedAPIServer: &operatorv1alpha1.KarmadaAggregatedAPIServer{
		ExtraArgs: map[string]string{"kube-api-qps": "100"},
	}})
	p := testPKI(t, k)
	secrets, err := consumerSecrets(k.Name, k.Namespace, "cluster.local", p, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &inputs{target: testRelease, domain: "cluster.local", pki: p, hashes: certificateHashes(k.Name, secrets)}
	values, err := chartValues(k, in, AggregatedAPIServer)
	if err != nil {
		t.Fatal(err)
	}
	deploy := renderDeployment(t, k, AggregatedAPIServer, values)
	ctr := deploy.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--authentication-kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--authorization-kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--bind-address=$(POD_IP)",
		"--etcd-cafile=/etc/flotilla/pki/etcd-ca.crt",
		"--etcd-certfile=/etc/flotilla/pki/etcd-client.crt",
		"--etcd-keyfile=/etc/flotilla/pki/etcd-client.key",
		"--etcd-prefix=/registry",
		"--etcd-servers=https://fleet-etcd-client.flotilla-system.svc.cluster.local:2379",
		"--kube-api-qps=100",
		"--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--secure-port=8443",
		"--tls-cert-file=/etc/flotilla/pki/tls.crt",
		"--tls-private-key-file=/etc/flotilla/pki/tls.key",
	}
	if diff := cmp.Diff(wantArgs, ctr.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if ctr.Image != "ghcr.io/flotilla-io/aggregated-apiserver:v0.3.0" {
		t.Errorf("image %s", ctr.Image)
	}
	mounted := map[string]map[string][]byte{}
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		data, ok := secrets[v.Secret.SecretName]
		if !ok {
			t.Fatalf("the pod mounts Secret %q, which the operator does not write", v.Secret.SecretName)
		}
		mounted[v.Name] = data
	}

	pkiData := mounted["pki"]
	pair, err := tls.X509KeyPair(pkiData[keyTLSCert], pkiData[keyTLSKey])
	if err != nil {
		t.Fatalf("serving key pair: %v", err)
	}
	serving, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	apiService := x509.NewCertPool()
	apiService.AppendCertsFromPEM(p.bundles[certs.IDCA]) // ensureAggregation's caBundle
	for _, name := range []string{"karmada-aggregated-apiserver.karmada-system.svc", "fleet-aggregated-apiserver.flotilla-system.svc"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: name, Roots: apiService, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the serving certificate for %s: %v", name, err)
		}
	}
	etcdClient, err := tls.X509KeyPair(pkiData["etcd-client.crt"], pkiData["etcd-client.key"])
	if err != nil {
		t.Fatalf("etcd client key pair: %v", err)
	}
	etcdCert, _ := x509.ParseCertificate(etcdClient.Certificate[0])
	etcdRoots := x509.NewCertPool()
	etcdRoots.AppendCertsFromPEM(pkiData["etcd-ca.crt"])
	if _, err := etcdCert.Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the etcd client certificate against etcd-ca.crt: %v", err)
	}

	cfg, err := clientcmd.Load(mounted["kubeconfig"][keyKubeconfig])
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	block, _ := pem.Decode(user.ClientCertificateData)
	if block == nil {
		t.Fatal("the kubeconfig has no client certificate")
	}
	client, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if client.Subject.CommonName != certs.AggregatedAPIServerUser || len(client.Subject.Organization) != 0 {
		t.Errorf("client certificate of %s, groups %v; want %s and no group", client.Subject.CommonName, client.Subject.Organization, certs.AggregatedAPIServerUser)
	}
	if got := deploy.Spec.Template.Annotations[operatorv1alpha1.AnnotationCertificateHash]; got == "" || got != in.hashes[AggregatedAPIServer] || got == in.hashes[APIServer] {
		t.Errorf("certificate hash %q; want the aggregated API server's own %q", got, in.hashes[AggregatedAPIServer])
	}
	if got := aggregatedServiceName(k, "cluster.local"); got != "fleet-aggregated-apiserver.flotilla-system.svc.cluster.local" {
		t.Errorf("the control plane's ExternalName %s", got)
	}
}

// TestAggregatedAPIServerRBAC: the contents bind the aggregated API
// server's identity to the ClusterRole generated from its RBAC markers,
// which lets it delegate authentication and authorization and read the
// members' Secrets.
func TestAggregatedAPIServerRBAC(t *testing.T) {
	static, err := parseContents()
	if err != nil {
		t.Fatal(err)
	}
	data, err := rbac.Roles.ReadFile("aggregated-apiserver/role.yaml")
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
			if o.Name == "flotilla-aggregated-apiserver" {
				role = o
			}
		case *rbacv1.ClusterRoleBinding:
			if o.Name == "flotilla-aggregated-apiserver" {
				binding = o
			}
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("the contents have no flotilla-aggregated-apiserver ClusterRole (%v) or binding (%v)", role != nil, binding != nil)
	}
	if diff := cmp.Diff(generated.Rules, role.Rules); diff != "" {
		t.Errorf("ClusterRole rules, against config/rbac/aggregated-apiserver (-generated +applied):\n%s", diff)
	}
	if diff := cmp.Diff([]rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: certs.AggregatedAPIServerUser}}, binding.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
	allowed := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, want := range [][3]string{
		{"authentication.k8s.io", "tokenreviews", "create"},
		{"authorization.k8s.io", "subjectaccessreviews", "create"},
		{"", "configmaps", "watch"},
		{"", "secrets", "get"},
		{"", "namespaces", "list"},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "watch"},
	} {
		if !allowed(want[0], want[1], want[2]) {
			t.Errorf("the role does not allow %s %s.%s", want[2], want[1], want[0])
		}
	}
}
