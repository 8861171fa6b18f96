package main

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/release"
)

// planFor parses init's own flags as the command line does and plans.
func planFor(t *testing.T, args ...string) (*initPlan, error) {
	t.Helper()
	o := &initOptions{}
	fs := pflag.NewFlagSet("init", pflag.ContinueOnError)
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return o.plan()
}

// TestInitPlan: init's flags, named as karmadactl init's, become the
// Karmada resource the operator installs, and the operator's chart values.
func TestInitPlan(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, crt, key := write("ca.crt", "CA"), write("client.crt", "CRT"), write("client.key", "KEY")
	values := write("values.yaml", "resources:\n  limits:\n    memory: 1Gi\nimage:\n  pullPolicy: Always\n")
	common := func(replicas int32) operatorv1alpha1.CommonSettings {
		return operatorv1alpha1.CommonSettings{Replicas: ptr.To(replicas), ImagePullPolicy: corev1.PullIfNotPresent}
	}
	components := func(etcd *operatorv1alpha1.Etcd, api *operatorv1alpha1.KarmadaAPIServer) *operatorv1alpha1.KarmadaComponents {
		return &operatorv1alpha1.KarmadaComponents{
			Etcd:                       etcd,
			KarmadaAPIServer:           api,
			KarmadaAggregatedAPIServer: &operatorv1alpha1.KarmadaAggregatedAPIServer{CommonSettings: common(1)},
			KarmadaControllerManager:   &operatorv1alpha1.KarmadaControllerManager{CommonSettings: common(1)},
			KarmadaScheduler:           &operatorv1alpha1.KarmadaScheduler{CommonSettings: common(1)},
			KarmadaWebhook:             &operatorv1alpha1.KarmadaWebhook{CommonSettings: common(1)},
			KubeControllerManager:      &operatorv1alpha1.KubeControllerManager{CommonSettings: common(1)},
		}
	}
	meta := metav1.ObjectMeta{Namespace: "karmada-system", Name: "karmada"}
	typeMeta := metav1.TypeMeta{APIVersion: "operator.karmada.io/v1alpha1", Kind: "Karmada"}

	for _, tc := range []struct {
		name       string
		args       []string
		want       operatorv1alpha1.KarmadaSpec
		secrets    []string
		wantImage  map[string]any
		wantMemory string
		wantNameNS [2]string
	}{
		{
			name: "defaults: hostPath etcd, as karmadactl init",
			want: operatorv1alpha1.KarmadaSpec{Components: components(
				&operatorv1alpha1.Etcd{Local: &operatorv1alpha1.LocalEtcd{CommonSettings: common(1), VolumeData: &operatorv1alpha1.VolumeData{
					HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/karmada-etcd", Type: ptr.To(corev1.HostPathDirectoryOrCreate)},
				}}},
				&operatorv1alpha1.KarmadaAPIServer{CommonSettings: common(1)},
			)},
			wantImage: map[string]any{"repository": "ghcr.io/flotilla-io/operator", "tag": release.Version, "pullPolicy": "IfNotPresent"},
		},
		{
			name: "PVC etcd of three, replicas, SANs, advertise address, version, registry, validity, domain, operator values",
			args: []string{
				"-n", "fleet", "--name", "eu", "--flotilla-version", "v0.1.0",
				"--etcd-storage-mode", "PVC", "--storage-classes-name", "fast", "--etcd-pvc-size", "10Gi", "--etcd-replicas", "3",
				"--etcd-image", "mirror.example/etcd:3.6.16-0",
				"--karmada-apiserver-replicas", "2", "--karmada-aggregated-apiserver-replicas", "2",
				"--cert-external-ip", "192.0.2.10", "--cert-external-dns", "fleet.example.com",
				"--karmada-apiserver-advertise-address", "192.0.2.10",
				"--private-image-registry", "mirror.example/flotilla", "--cert-validity-period", "2160h",
				"--host-cluster-domain", "corp.local", "--operator-values", values,
			},
			want: func() operatorv1alpha1.KarmadaSpec {
				comps := components(
					&operatorv1alpha1.Etcd{Local: &operatorv1alpha1.LocalEtcd{
						CommonSettings: operatorv1alpha1.CommonSettings{
							Image:    operatorv1alpha1.Image{ImageRepository: "mirror.example/etcd", ImageTag: "3.6.16-0"},
							Replicas: ptr.To[int32](3), ImagePullPolicy: corev1.PullIfNotPresent,
						},
						VolumeData: &operatorv1alpha1.VolumeData{VolumeClaim: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
							AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
							StorageClassName: ptr.To("fast"),
							Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
						}}},
					}},
					&operatorv1alpha1.KarmadaAPIServer{CommonSettings: common(2), CertSANs: []string{"192.0.2.10", "fleet.example.com"}, ServiceType: corev1.ServiceTypeNodePort},
				)
				comps.KarmadaAggregatedAPIServer.Replicas = ptr.To[int32](2)
				return operatorv1alpha1.KarmadaSpec{
					Version:    "v0.1.0",
					Components: comps,
					HostCluster: &operatorv1alpha1.HostCluster{
						APIEndpoint: "https://192.0.2.10",
						Networking:  &operatorv1alpha1.Networking{DNSDomain: ptr.To("corp.local")},
					},
					PrivateRegistry:   &operatorv1alpha1.ImageRegistry{Registry: "mirror.example/flotilla"},
					CustomCertificate: &operatorv1alpha1.CustomCertificate{LeafCertValidityDays: ptr.To[int32](90)},
				}
			}(),
			// The user's values win over init's.
			wantImage:  map[string]any{"repository": "mirror.example/flotilla/operator", "tag": release.Version, "pullPolicy": "Always"},
			wantMemory: "1Gi",
			wantNameNS: [2]string{"fleet", "eu"},
		},
		{
			name: "external etcd and the user's CA, in Secrets",
			args: []string{
				"--external-etcd-servers", "https://etcd-0.example:2379, https://etcd-1.example:2379",
				"--external-etcd-ca-cert-path", ca, "--external-etcd-client-cert-path", crt, "--external-etcd-client-key-path", key,
				"--external-etcd-key-prefix", "/fleet", "--ca-cert-file", crt, "--ca-key-file", key,
			},
			want: operatorv1alpha1.KarmadaSpec{
				Components: components(
					&operatorv1alpha1.Etcd{External: &operatorv1alpha1.ExternalEtcd{
						Endpoints: []string{"https://etcd-0.example:2379", "https://etcd-1.example:2379"},
						SecretRef: operatorv1alpha1.LocalSecretReference{Namespace: "karmada-system", Name: "karmada-external-etcd"},
					}},
					&operatorv1alpha1.KarmadaAPIServer{CommonSettings: common(1), ExtraArgs: map[string]string{"etcd-prefix": "/fleet"}},
				),
				CustomCertificate: &operatorv1alpha1.CustomCertificate{
					APIServerCACert: &operatorv1alpha1.LocalSecretReference{Namespace: "karmada-system", Name: "karmada-ca"},
				},
			},
			secrets:   []string{"karmada-external-etcd: ca.crt=CA tls.crt=CRT tls.key=KEY", "karmada-ca: tls.crt=CRT tls.key=KEY"},
			wantImage: map[string]any{"repository": "ghcr.io/flotilla-io/operator", "tag": release.Version, "pullPolicy": "IfNotPresent"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planFor(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			m := meta
			if tc.wantNameNS[0] != "" {
				m = metav1.ObjectMeta{Namespace: tc.wantNameNS[0], Name: tc.wantNameNS[1]}
			}
			want := &operatorv1alpha1.Karmada{TypeMeta: typeMeta, ObjectMeta: m, Spec: tc.want}
			if diff := cmp.Diff(want, p.karmada); diff != "" {
				t.Errorf("Karmada (-want +got):\n%s", diff)
			}
			var secrets []string
			for _, s := range p.secrets {
				var kv []string
				for _, k := range slices.Sorted(maps.Keys(s.Data)) {
					kv = append(kv, k+"="+string(s.Data[k]))
				}
				secrets = append(secrets, s.Name+": "+strings.Join(kv, " "))
				if s.Namespace != m.Namespace || s.Labels[labelCreatedBy] != createdBy {
					t.Errorf("Secret %s/%s labels %v", s.Namespace, s.Name, s.Labels)
				}
			}
			if diff := cmp.Diff(tc.secrets, secrets); diff != "" {
				t.Errorf("Secrets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantImage, p.values["image"]); diff != "" {
				t.Errorf("operator image values (-want +got):\n%s", diff)
			}
			if tc.wantMemory != "" {
				limits := p.values["resources"].(map[string]any)["limits"].(map[string]any)
				if limits["memory"] != tc.wantMemory {
					t.Errorf("operator values: resources %v", p.values["resources"])
				}
			}
			if p.namespace.Name != m.Namespace || p.namespace.Labels[labelCreatedBy] != createdBy {
				t.Errorf("namespace %+v", p.namespace.ObjectMeta)
			}
		})
	}
}

// TestInitFlagErrors: every bad flag is reported at once, each naming its
// flag, before anything is contacted.
func TestInitFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{
			name: "values out of range",
			args: []string{"--wait-component-ready-timeout", "-1", "-n", "Fleet", "--name", "", "--etcd-storage-mode", "disk", "--etcd-replicas", "2", "--image-pull-policy", "Sometimes",
				"--karmada-webhook-replicas", "0", "--cert-validity-period", "36h"},
			want: []string{
				`--namespace: "Fleet": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`--wait-component-ready-timeout: -1: seconds, 0 or more`,
				`--name: "": a DNS label of 1 to 29 characters, the longest the operator's release names allow`,
				`--image-pull-policy: "Sometimes": Always, Never or IfNotPresent`,
				`--etcd-replicas: 2: 1 or 3`,
				`--etcd-storage-mode: "disk": emptyDir, hostPath or PVC`,
				`--karmada-webhook-replicas: 0: at least 1`,
				`--cert-validity-period: 36h0m0s: a positive number of whole days, e.g. 8760h`,
			},
		},
		{
			name: "storage and addresses",
			args: []string{"--etcd-storage-mode", "PVC", "--etcd-pvc-size", "lots", "--cert-external-ip", "10.0.0.300",
				"--karmada-apiserver-advertise-address", "node-1", "--etcd-image", "etcd"},
			want: []string{
				`--etcd-image: "etcd": an image reference with a tag, e.g. registry.k8s.io/etcd:3.6.16-0`,
				`--etcd-pvc-size: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
				`--storage-classes-name: required in PVC mode`,
				`--cert-external-ip: "10.0.0.300" is not an IP address`,
				`--karmada-apiserver-advertise-address: "node-1" is not an IP address`,
			},
		},
		{
			name: "external etcd halves",
			args: []string{"--external-etcd-servers", "https://etcd.example:2379", "--ca-cert-file", "ca.crt"},
			want: []string{
				`--external-etcd-ca-cert-path: required with --external-etcd-servers`,
				`--external-etcd-client-cert-path: required with --external-etcd-servers`,
				`--external-etcd-client-key-path: required with --external-etcd-servers`,
				`--ca-cert-file: --ca-cert-file and --ca-key-file go together`,
			},
		},
		{
			name: "external etcd files without servers, hostPath of three",
			args: []string{"--external-etcd-key-prefix", "/x", "--etcd-replicas", "3", "--etcd-data", "relative"},
			want: []string{
				`--external-etcd-key-prefix: only with --external-etcd-servers`,
				`--etcd-replicas: 3: hostPath mode runs one etcd member`,
				`--etcd-data: "relative": an absolute path on the node`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planFor(t, tc.args...)
			if err == nil {
				t.Fatal("planned; want errors")
			}
			var got []string
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range joined.Unwrap() {
					got = append(got, e.Error())
				}
			} else {
				got = []string{err.Error()}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInitDryRun: --dry-run prints, with no cluster at all, the namespace,
// the operator's release as Helm installs it (CRD first) and the Karmada,
// as YAML that decodes.
func TestInitDryRun(t *testing.T) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	// An unreachable host: a dry run must not need one.
	cmd.SetArgs([]string{"init", "--dry-run", "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--etcd-storage-mode", "emptyDir", "-n", "fleet"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# flotillactl init --dry-run: nothing was applied\n") {
		t.Errorf("output starts %q", out.String()[:min(80, out.Len())])
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	var kinds []string
	var deployment, karmada map[string]any
	var clusterScoped []string
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if obj == nil {
			continue
		}
		kind, _ := obj["kind"].(string)
		kinds = append(kinds, kind)
		switch kind {
		case "Deployment":
			deployment = obj
		case "Karmada":
			karmada = obj
		case "ClusterRole", "ClusterRoleBinding":
			clusterScoped = append(clusterScoped, obj["metadata"].(map[string]any)["name"].(string))
		}
		if md, ok := obj["metadata"].(map[string]any); ok && md["namespace"] != nil && md["namespace"] != "fleet" {
			t.Errorf("%s %v in namespace %v", kind, md["name"], md["namespace"])
		}
	}
	want := []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "Deployment", "Karmada"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	// Cluster-scoped, they are named for the namespace: init into another
	// namespace installs an operator of its own beside this one.
	for _, name := range clusterScoped {
		if name != "flotilla-operator-fleet" {
			t.Errorf("cluster-scoped object %s, want it named flotilla-operator-fleet", name)
		}
	}
	image := deployment["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	if image != "ghcr.io/flotilla-io/operator:"+release.Version {
		t.Errorf("operator image %v", image)
	}
	if _, ok := karmada["status"]; ok {
		t.Errorf("the Karmada has a status: %v", karmada)
	}
}

// TestInstallFailed: a failed install says what to do, and when an object
// of the release's exists already, that the operator is installed another
// way.
func TestInstallFailed(t *testing.T) {
	owned := errors.New(`Unable to continue with install: ClusterRole "flotilla-operator-fleet" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata`)
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{owned, []string{"Helm release flotilla-operator in fleet", "already installed for namespace fleet another way", "create the Karmada in fleet yourself", "uninstall it"}},
		{errors.New("connection refused"), []string{"Helm release flotilla-operator in fleet", "connection refused", "--kubeconfig/--context"}},
	} {
		got := installFailed("fleet", tc.err).Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("installFailed(%q) = %q, want it to say %q", tc.err, got, w)
			}
		}
	}
}
