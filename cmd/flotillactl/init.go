package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	deploycharts "github.com/flotilla-io/flotilla/deploy/charts"
	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// The operator's Helm release that init installs and deinit removes, one
// per namespace; the chart names its objects after it.
const operatorRelease = "flotilla-operator"

// kubeconfigFile is the admin kubeconfig's name in --karmada-data, as
// karmadactl init names it.
const kubeconfigFile = "karmada-apiserver.config"

// labelCreatedBy marks what init created besides the Helm release (the
// namespace, the Secrets of external etcd and of the CA), for deinit.
const (
	labelCreatedBy = "app.kubernetes.io/created-by"
	createdBy      = "flotillactl"
)

// hostFlags are the host cluster's connection: --kubeconfig and --context
// only, since -n is the install's namespace, as in karmadactl init.
type hostFlags struct {
	flags *genericclioptions.ConfigFlags
}

func newHostFlags(cmd *cobra.Command) hostFlags {
	f := genericclioptions.NewConfigFlags(false)
	cmd.Flags().StringVar(f.KubeConfig, "kubeconfig", "", "path of the host cluster's kubeconfig (default: the usual kubeconfig rules)")
	cmd.Flags().StringVar(f.Context, "context", "", "context of the host cluster in --kubeconfig")
	return hostFlags{f}
}

func (h hostFlags) client() (client.Client, error) {
	cfg, err := h.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig/--context: %w", err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operatorv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// helm is Helm's action configuration for namespace of the host.
func (h hostFlags) helm(namespace string) (*action.Configuration, error) {
	h.flags.Namespace = ptr.To(namespace)
	cfg := &action.Configuration{}
	if err := cfg.Init(h.flags, namespace, "secret", func(format string, v ...any) {}); err != nil {
		return nil, fmt.Errorf("connecting Helm to the host cluster: %w", err)
	}
	return cfg, nil
}

// initOptions are init's flags. Those named like karmadactl init's mean
// the same; the karmadactl flags about its own non-operator install do not
// apply (see the command's help).
type initOptions struct {
	namespace, name string
	version         string
	dataDir         string
	dryRun          bool
	timeout         int

	etcdStorageMode, etcdData, etcdPVCSize, storageClass  string
	etcdReplicas                                          int32
	etcdImage                                             string
	externalEtcdServers, externalEtcdCA                   string
	externalEtcdCert, externalEtcdKey, externalEtcdPrefix string

	apiServerReplicas, aggregatedReplicas, controllerManagerReplicas  int32
	schedulerReplicas, webhookReplicas, kubeControllerManagerReplicas int32
	apiServerImage, kubeControllerManagerImage                        string

	privateRegistry   string
	imagePullPolicy   string
	certExternalIP    string
	certExternalDNS   string
	certValidity      time.Duration
	advertiseAddress  string
	hostClusterDomain string
	caCertFile        string
	caKeyFile         string
	operatorValues    string
}

func newInitCommand() *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install Flotilla in a host cluster through its operator",
		Long: `Install Flotilla in the host cluster of --kubeconfig/--context, as karmadactl init
installs Karmada, but through the Flotilla operator:

  1. the operator's Helm chart (deploy/charts/flotilla-operator, built into this
     binary, the operator of this release) as the Helm release flotilla-operator
     in --namespace, with its Karmada CRD; ` + "`helm list -n <namespace>`" + ` shows it,
     and running init again upgrades it. The operator serves the Karmada
     resources of that namespace (--watch-namespace);
  2. a Karmada resource (operator.karmada.io/v1alpha1) named --name in
     --namespace, made from the flags below;
  3. waits, showing what the operator is doing, until the Karmada is Ready;
  4. writes the admin kubeconfig to <--karmada-data>/karmada-apiserver.config.

With --dry-run it prints all of this as YAML and changes nothing. The install
resumes where it stopped when run again.

Flags of karmadactl init that do not apply, because the operator installs the
control plane: --crds (the CRDs are built into the operator), --config,
--karmada-pki (the certificates stay in Secrets of the host), --etcd-init-image,
--etcd-node-selector-labels, --kube-image-mirror-country, --kube-image-registry
and --kube-image-tag (the operator's version table names the Kubernetes images;
--private-image-registry mirrors all of them), --port (the API server's
Service is a NodePort with --karmada-apiserver-advertise-address, its port
chosen by the host), --image-pull-secrets, and the images of Karmada's own
components (--karmada-controller-manager-image and so on: Flotilla runs its
own).`,
		Example: `  # Install into the current context's cluster, etcd on an emptyDir
  flotillactl init --etcd-storage-mode=emptyDir -d ./karmada

  # Reachable from outside the host at a node's address
  flotillactl init --karmada-apiserver-advertise-address=192.0.2.10 -d ./karmada

  # See what would be installed
  flotillactl init --dry-run`,
		Args: cobra.NoArgs,
	}
	host := newHostFlags(cmd)
	o.bind(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		plan, err := o.plan()
		if err != nil {
			return err
		}
		if o.dryRun {
			return plan.print(cmd.OutOrStdout())
		}
		return runInit(cmd.Context(), cmd.OutOrStdout(), host, o, plan)
	}
	return cmd
}

// bind registers init's own flags on f.
func (o *initOptions) bind(f *pflag.FlagSet) {
	f.StringVarP(&o.namespace, "namespace", "n", "karmada-system", "namespace of the operator and of the Karmada resource (its control plane runs there)")
	f.StringVar(&o.name, "name", "karmada", "name of the Karmada resource; its objects are named after it")
	f.StringVar(&o.version, "flotilla-version", "", "pin the control plane to this Flotilla release of the operator's version table (spec.version); default: the operator's own, so that upgrading the operator upgrades the control plane")
	f.StringVarP(&o.dataDir, "karmada-data", "d", "/etc/karmada", "directory the admin kubeconfig is written to, as karmada-apiserver.config")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be applied, as YAML, and change nothing")
	f.IntVar(&o.timeout, "wait-component-ready-timeout", 120, "seconds to wait for the Karmada to be Ready; 0 waits forever")

	f.StringVar(&o.etcdStorageMode, "etcd-storage-mode", "hostPath", "etcd data storage mode: emptyDir, hostPath or PVC (with --storage-classes-name)")
	f.StringVar(&o.etcdData, "etcd-data", "/var/lib/karmada-etcd", "etcd data path on the node, in hostPath mode")
	f.StringVar(&o.etcdPVCSize, "etcd-pvc-size", "5Gi", "size of each etcd member's claim, in PVC mode")
	f.StringVar(&o.storageClass, "storage-classes-name", "", "StorageClass of etcd's claims, in PVC mode")
	f.Int32Var(&o.etcdReplicas, "etcd-replicas", 1, "etcd members: 1 or 3 (1 in hostPath mode)")
	f.StringVar(&o.etcdImage, "etcd-image", "", "etcd image (default: the operator's version table's)")
	f.StringVar(&o.externalEtcdServers, "external-etcd-servers", "", "client URLs of an external etcd, comma-separated; with the three --external-etcd-*-path flags")
	f.StringVar(&o.externalEtcdCA, "external-etcd-ca-cert-path", "", "CA certificate of the external etcd, PEM")
	f.StringVar(&o.externalEtcdCert, "external-etcd-client-cert-path", "", "client certificate for the external etcd, PEM")
	f.StringVar(&o.externalEtcdKey, "external-etcd-client-key-path", "", "client key for the external etcd, PEM")
	f.StringVar(&o.externalEtcdPrefix, "external-etcd-key-prefix", "", "key prefix in the external etcd (the API server's --etcd-prefix)")

	f.Int32Var(&o.apiServerReplicas, "karmada-apiserver-replicas", 1, "API server replicas")
	f.Int32Var(&o.aggregatedReplicas, "karmada-aggregated-apiserver-replicas", 1, "aggregated API server replicas")
	f.Int32Var(&o.controllerManagerReplicas, "karmada-controller-manager-replicas", 1, "controller-manager replicas")
	f.Int32Var(&o.schedulerReplicas, "karmada-scheduler-replicas", 1, "scheduler replicas")
	f.Int32Var(&o.webhookReplicas, "karmada-webhook-replicas", 1, "webhook replicas")
	f.Int32Var(&o.kubeControllerManagerReplicas, "karmada-kube-controller-manager-replicas", 1, "kube-controller-manager replicas")
	f.StringVar(&o.apiServerImage, "karmada-apiserver-image", "", "kube-apiserver image (default: the operator's version table's)")
	f.StringVar(&o.kubeControllerManagerImage, "karmada-kube-controller-manager-image", "", "kube-controller-manager image (default: the operator's version table's)")

	f.StringVar(&o.privateRegistry, "private-image-registry", "", "registry every image is pulled from, the operator's included (offline installs)")
	f.StringVar(&o.imagePullPolicy, "image-pull-policy", "IfNotPresent", "image pull policy of every container: Always, Never or IfNotPresent")
	f.StringVar(&o.certExternalIP, "cert-external-ip", "", "more IP addresses of the API server's certificate, comma-separated")
	f.StringVar(&o.certExternalDNS, "cert-external-dns", "", "more DNS names of the API server's certificate, comma-separated")
	f.DurationVar(&o.certValidity, "cert-validity-period", 365*24*time.Hour, "validity of the certificates, in whole days (e.g. 8760h)")
	f.StringVar(&o.advertiseAddress, "karmada-apiserver-advertise-address", "", "a node address of the host: the API server's Service becomes a NodePort and the kubeconfig points there (default: the Service's DNS name, reachable from inside the host)")
	f.StringVar(&o.hostClusterDomain, "host-cluster-domain", "cluster.local", "DNS domain of the host cluster")
	f.StringVar(&o.caCertFile, "ca-cert-file", "", "CA certificate that issues the control plane's certificates, PEM (with --ca-key-file); default: the operator makes one")
	f.StringVar(&o.caKeyFile, "ca-key-file", "", "the CA's private key, PEM (with --ca-cert-file)")
	f.StringVar(&o.operatorValues, "operator-values", "", "a Helm values file for the operator's chart (resources, nodeSelector, ...), over init's own values")
}

// initPlan is what init applies: the operator's release and the objects
// of the host.
type initPlan struct {
	namespace *corev1.Namespace
	chart     *chart.Chart
	values    map[string]any
	secrets   []*corev1.Secret
	karmada   *operatorv1alpha1.Karmada
}

// plan checks the flags and computes what init applies; every error names
// its flag.
func (o *initOptions) plan() (*initPlan, error) {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		bad("namespace", "%q: %s", o.namespace, strings.Join(errs, "; "))
	}
	if o.timeout < 0 {
		bad("wait-component-ready-timeout", "%d: seconds, 0 or more", o.timeout)
	}
	if len(validation.IsDNS1123Label(o.name)) > 0 || len(o.name) > 29 {
		bad("name", "%q: a DNS label of 1 to 29 characters, the longest the operator's release names allow", o.name)
	}
	k := &operatorv1alpha1.Karmada{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorv1alpha1.GroupVersion.String(), Kind: "Karmada"},
		ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: o.name},
		Spec: operatorv1alpha1.KarmadaSpec{
			Version:    o.version,
			Components: &operatorv1alpha1.KarmadaComponents{},
		},
	}
	c := k.Spec.Components
	policy := corev1.PullPolicy(o.imagePullPolicy)
	switch policy {
	case corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent:
	default:
		bad("image-pull-policy", "%q: Always, Never or IfNotPresent", o.imagePullPolicy)
	}
	common := func(flag string, replicas int32) operatorv1alpha1.CommonSettings {
		if replicas < 1 {
			bad(flag, "%d: at least 1", replicas)
		}
		return operatorv1alpha1.CommonSettings{Replicas: ptr.To(replicas), ImagePullPolicy: policy}
	}
	image := func(flag, ref string) operatorv1alpha1.Image {
		if ref == "" {
			return operatorv1alpha1.Image{}
		}
		i := strings.LastIndex(ref, ":")
		if i <= strings.LastIndex(ref, "/") || i == len(ref)-1 {
			bad(flag, "%q: an image reference with a tag, e.g. registry.k8s.io/etcd:3.6.16-0", ref)
			return operatorv1alpha1.Image{}
		}
		return operatorv1alpha1.Image{ImageRepository: ref[:i], ImageTag: ref[i+1:]}
	}

	var secrets []*corev1.Secret
	if o.externalEtcdServers != "" {
		ext := &operatorv1alpha1.ExternalEtcd{SecretRef: operatorv1alpha1.LocalSecretReference{Name: o.name + "-external-etcd", Namespace: o.namespace}}
		for _, s := range strings.Split(o.externalEtcdServers, ",") {
			ext.Endpoints = append(ext.Endpoints, strings.TrimSpace(s))
		}
		data := map[string][]byte{}
		for _, file := range []struct{ flag, path, key string }{
			{"external-etcd-ca-cert-path", o.externalEtcdCA, "ca.crt"},
			{"external-etcd-client-cert-path", o.externalEtcdCert, "tls.crt"},
			{"external-etcd-client-key-path", o.externalEtcdKey, "tls.key"},
		} {
			if file.path == "" {
				bad(file.flag, "required with --external-etcd-servers")
				continue
			}
			b, err := os.ReadFile(file.path)
			if err != nil {
				bad(file.flag, "%v", err)
				continue
			}
			data[file.key] = b
		}
		secrets = append(secrets, initSecret(o.namespace, ext.SecretRef.Name, data))
		c.Etcd = &operatorv1alpha1.Etcd{External: ext}
	} else {
		for _, flag := range []struct{ name, value string }{
			{"external-etcd-ca-cert-path", o.externalEtcdCA}, {"external-etcd-client-cert-path", o.externalEtcdCert},
			{"external-etcd-client-key-path", o.externalEtcdKey}, {"external-etcd-key-prefix", o.externalEtcdPrefix},
		} {
			if flag.value != "" {
				bad(flag.name, "only with --external-etcd-servers")
			}
		}
		local := &operatorv1alpha1.LocalEtcd{CommonSettings: common("etcd-replicas", o.etcdReplicas)}
		local.Image = image("etcd-image", o.etcdImage)
		if o.etcdReplicas != 1 && o.etcdReplicas != 3 {
			bad("etcd-replicas", "%d: 1 or 3", o.etcdReplicas)
		}
		switch o.etcdStorageMode {
		case "emptyDir":
			local.VolumeData = &operatorv1alpha1.VolumeData{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		case "hostPath":
			if o.etcdReplicas != 1 {
				bad("etcd-replicas", "%d: hostPath mode runs one etcd member", o.etcdReplicas)
			}
			if !filepath.IsAbs(o.etcdData) {
				bad("etcd-data", "%q: an absolute path on the node", o.etcdData)
			}
			local.VolumeData = &operatorv1alpha1.VolumeData{HostPath: &corev1.HostPathVolumeSource{
				Path: o.etcdData, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}}
		case "PVC":
			size, err := resource.ParseQuantity(o.etcdPVCSize)
			if err != nil {
				bad("etcd-pvc-size", "%q: %v", o.etcdPVCSize, err)
			}
			if o.storageClass == "" {
				bad("storage-classes-name", "required in PVC mode")
			}
			local.VolumeData = &operatorv1alpha1.VolumeData{VolumeClaim: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(o.storageClass),
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
				},
			}}
		default:
			bad("etcd-storage-mode", "%q: emptyDir, hostPath or PVC", o.etcdStorageMode)
		}
		c.Etcd = &operatorv1alpha1.Etcd{Local: local}
	}

	api := &operatorv1alpha1.KarmadaAPIServer{CommonSettings: common("karmada-apiserver-replicas", o.apiServerReplicas)}
	api.Image = image("karmada-apiserver-image", o.apiServerImage)
	for _, ip := range splitList(o.certExternalIP) {
		if net.ParseIP(ip) == nil {
			bad("cert-external-ip", "%q is not an IP address", ip)
		}
		api.CertSANs = append(api.CertSANs, ip)
	}
	api.CertSANs = append(api.CertSANs, splitList(o.certExternalDNS)...)
	if o.externalEtcdPrefix != "" {
		api.ExtraArgs = map[string]string{"etcd-prefix": o.externalEtcdPrefix}
	}
	if o.advertiseAddress != "" {
		if net.ParseIP(o.advertiseAddress) == nil {
			bad("karmada-apiserver-advertise-address", "%q is not an IP address", o.advertiseAddress)
		}
		api.ServiceType = corev1.ServiceTypeNodePort
		k.Spec.HostCluster = &operatorv1alpha1.HostCluster{APIEndpoint: "https://" + o.advertiseAddress}
	}
	c.KarmadaAPIServer = api
	c.KarmadaAggregatedAPIServer = &operatorv1alpha1.KarmadaAggregatedAPIServer{CommonSettings: common("karmada-aggregated-apiserver-replicas", o.aggregatedReplicas)}
	c.KarmadaControllerManager = &operatorv1alpha1.KarmadaControllerManager{CommonSettings: common("karmada-controller-manager-replicas", o.controllerManagerReplicas)}
	c.KarmadaScheduler = &operatorv1alpha1.KarmadaScheduler{CommonSettings: common("karmada-scheduler-replicas", o.schedulerReplicas)}
	c.KarmadaWebhook = &operatorv1alpha1.KarmadaWebhook{CommonSettings: common("karmada-webhook-replicas", o.webhookReplicas)}
	kcm := &operatorv1alpha1.KubeControllerManager{CommonSettings: common("karmada-kube-controller-manager-replicas", o.kubeControllerManagerReplicas)}
	kcm.Image = image("karmada-kube-controller-manager-image", o.kubeControllerManagerImage)
	c.KubeControllerManager = kcm

	if o.privateRegistry != "" {
		k.Spec.PrivateRegistry = &operatorv1alpha1.ImageRegistry{Registry: o.privateRegistry}
	}
	if o.hostClusterDomain != "cluster.local" {
		if k.Spec.HostCluster == nil {
			k.Spec.HostCluster = &operatorv1alpha1.HostCluster{}
		}
		k.Spec.HostCluster.Networking = &operatorv1alpha1.Networking{DNSDomain: ptr.To(o.hostClusterDomain)}
	}
	days := o.certValidity / (24 * time.Hour)
	if o.certValidity <= 0 || o.certValidity%(24*time.Hour) != 0 {
		bad("cert-validity-period", "%s: a positive number of whole days, e.g. 8760h", o.certValidity)
	}
	cert := &operatorv1alpha1.CustomCertificate{}
	if days != 365 {
		cert.LeafCertValidityDays = ptr.To(int32(days))
	}
	if (o.caCertFile == "") != (o.caKeyFile == "") {
		bad("ca-cert-file", "--ca-cert-file and --ca-key-file go together")
	} else if o.caCertFile != "" {
		crt, err := os.ReadFile(o.caCertFile)
		if err != nil {
			bad("ca-cert-file", "%v", err)
		}
		key, err := os.ReadFile(o.caKeyFile)
		if err != nil {
			bad("ca-key-file", "%v", err)
		}
		ref := operatorv1alpha1.LocalSecretReference{Name: o.name + "-ca", Namespace: o.namespace}
		secrets = append(secrets, initSecret(o.namespace, ref.Name, map[string][]byte{"tls.crt": crt, "tls.key": key}))
		cert.APIServerCACert = &ref
	}
	if cert.LeafCertValidityDays != nil || cert.APIServerCACert != nil {
		k.Spec.CustomCertificate = cert
	}

	values := map[string]any{
		// The operator serves the Karmadas of its own namespace, so that an
		// install is one namespace that deinit removes whole.
		"watchNamespace": o.namespace,
		"image": map[string]any{
			"repository": release.Operator.Repository(o.privateRegistry),
			"tag":        release.Version,
			"pullPolicy": string(policy),
		},
	}
	if o.operatorValues != "" {
		user, err := chartutil.ReadValuesFile(o.operatorValues)
		if err != nil {
			bad("operator-values", "%v", err)
		} else {
			values = chartutil.CoalesceTables(user.AsMap(), values)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	ch, err := deploycharts.Operator()
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: o.namespace, Labels: map[string]string{labelCreatedBy: createdBy}},
	}
	return &initPlan{namespace: ns, chart: ch, values: values, secrets: secrets, karmada: k}, nil
}

func initSecret(namespace, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{labelCreatedBy: createdBy}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// render renders the operator's release as Helm would install it, without
// a cluster.
func (p *initPlan) render() (string, error) {
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly = true, true
	install.ReleaseName, install.Namespace = operatorRelease, p.namespace.Name
	// Without a cluster, Helm assumes an old Kubernetes; the version the
	// operator's release runs stands in for the host's.
	table, err := versions.Builtin()
	if err != nil {
		return "", err
	}
	kube, err := chartutil.ParseKubeVersion(table.Own().Kubernetes)
	if err != nil {
		return "", err
	}
	install.KubeVersion = kube
	rel, err := install.Run(p.chart, p.values)
	if err != nil {
		return "", fmt.Errorf("rendering the operator's chart: %w", err)
	}
	return rel.Manifest, nil
}

// print writes everything init would apply, as one YAML stream.
func (p *initPlan) print(out io.Writer) error {
	manifest, err := p.render()
	if err != nil {
		return err
	}
	var docs []string
	add := func(obj runtime.Object) error {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		// What the API server fills in is not part of what is applied.
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u, "spec", "finalizers")
		b, err := yaml.Marshal(u)
		if err != nil {
			return err
		}
		docs = append(docs, string(b))
		return nil
	}
	if err := add(p.namespace); err != nil {
		return err
	}
	// The CRD first, as Helm installs it, then the release in Helm's
	// install order.
	for _, crd := range p.chart.CRDObjects() {
		docs = append(docs, "# Source: "+crd.Filename+"\n"+strings.TrimPrefix(strings.TrimSpace(string(crd.File.Data)), "---\n")+"\n")
	}
	docs = append(docs, strings.TrimPrefix(strings.TrimSpace(manifest), "---\n")+"\n")
	for _, s := range p.secrets {
		if err := add(s); err != nil {
			return err
		}
	}
	if err := add(p.karmada); err != nil {
		return err
	}
	_, err = fmt.Fprint(out, "# flotillactl init --dry-run: nothing was applied\n---\n"+strings.Join(docs, "---\n"))
	return err
}

func runInit(ctx context.Context, out io.Writer, host hostFlags, o *initOptions, p *initPlan) error {
	cl, err := host.client()
	if err != nil {
		return err
	}
	started := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "[%5s] %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, args...))
	}

	// The namespace first, labelled, so that deinit knows init made it.
	if err := cl.Create(ctx, p.namespace.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w (check that --kubeconfig/--context reach the host cluster with rights to install an operator)", p.namespace.Name, err)
	}
	cfg, err := host.helm(p.namespace.Name)
	if err != nil {
		return err
	}
	if err := applyOperatorRelease(cfg, p, step); err != nil {
		return err
	}
	for _, s := range p.secrets {
		if err := createOrUpdate(ctx, cl, s.DeepCopy()); err != nil {
			return err
		}
	}
	k := p.karmada.DeepCopy()
	// The chart's CRD was just created: the API server serves the kind a
	// moment later.
	last, err := pollUntil(ctx, time.Minute, func(ctx context.Context) (bool, string, error) {
		err := cl.Create(ctx, k.DeepCopy())
		switch {
		case apierrors.IsAlreadyExists(err):
			step("Karmada %s/%s exists already: waiting for it as it is (run deinit to start over)", k.Namespace, k.Name)
			return true, "", nil
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			return false, "waiting for the Karmada CRD to be served: " + err.Error(), nil
		case err != nil:
			return false, "", fmt.Errorf("creating Karmada %s/%s: %w", k.Namespace, k.Name, err)
		}
		step("Created Karmada %s/%s", k.Namespace, k.Name)
		return true, "", nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w; run init again", last, err)
	}

	timeout := time.Duration(o.timeout) * time.Second
	if err := waitOperator(ctx, cl, p.namespace.Name, operatorImage(p.values), timeout, started, step); err != nil {
		return err
	}
	ready, err := waitKarmadaReady(ctx, cl, client.ObjectKeyFromObject(k), timeout, started, step)
	if err != nil {
		return err
	}
	path, err := writeAdminKubeconfig(ctx, cl, ready, o.advertiseAddress, o.dataDir)
	if err != nil {
		return err
	}
	step("Flotilla is ready: %s", readyMessage(ready))
	fmt.Fprintf(out, `
The control plane's admin kubeconfig is %s:
  kubectl --kubeconfig %s get clusters
Join a member cluster:
  flotillactl join <name> --kubeconfig %s --cluster-kubeconfig <member kubeconfig>
`, path, path, path)
	if o.advertiseAddress == "" {
		fmt.Fprintf(out, "Its server is the API server's Service, reachable from inside the host cluster; pass --karmada-apiserver-advertise-address for one reachable from outside.\n")
	}
	return nil
}

// applyOperatorRelease installs the operator's release, or upgrades it
// when init ran before.
func applyOperatorRelease(cfg *action.Configuration, p *initPlan, step func(string, ...any)) error {
	hist := action.NewHistory(cfg)
	hist.Max = 1
	_, err := hist.Run(operatorRelease)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		install := action.NewInstall(cfg)
		install.ReleaseName, install.Namespace = operatorRelease, p.namespace.Name
		if _, err := install.Run(p.chart, p.values); err != nil {
			return installFailed(p.namespace.Name, err)
		}
		step("Installed the operator: Helm release %s in %s (image %s)", operatorRelease, p.namespace.Name, operatorImage(p.values))
	case err != nil:
		return fmt.Errorf("reading Helm release %s: %w", operatorRelease, err)
	default:
		upgrade := action.NewUpgrade(cfg)
		upgrade.Namespace = p.namespace.Name
		if _, err := upgrade.Run(operatorRelease, p.chart, p.values); err != nil {
			return fmt.Errorf("upgrading the operator (Helm release %s in %s): %w; `helm history %s -n %s` shows its revisions", operatorRelease, p.namespace.Name, err, operatorRelease, p.namespace.Name)
		}
		step("Upgraded the operator: Helm release %s in %s (image %s)", operatorRelease, p.namespace.Name, operatorImage(p.values))
	}
	return nil
}

// installFailed says why installing the operator's release in namespace
// failed and what to do. The chart's cluster-scoped objects are named for
// their namespace, so operators installed by init in other namespaces are
// no obstacle; an object of the release's that exists already was made
// by an operator installed another way.
func installFailed(namespace string, err error) error {
	hint := "check that --kubeconfig/--context reach the host cluster with rights to install an operator"
	if strings.Contains(err.Error(), "cannot be imported into the current release") {
		hint = fmt.Sprintf("the operator is already installed for namespace %s another way (OLM, kustomize or a Helm release of another name), "+
			"which owns that object: use that operator (create the Karmada in %s yourself), or uninstall it and run init again", namespace, namespace)
	}
	return fmt.Errorf("installing the operator (Helm release %s in %s): %w; %s", operatorRelease, namespace, err, hint)
}

func operatorImage(values map[string]any) string {
	img, _ := values["image"].(map[string]any)
	return fmt.Sprintf("%v:%v", img["repository"], img["tag"])
}

func createOrUpdate(ctx context.Context, cl client.Client, obj *corev1.Secret) error {
	err := cl.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		got := &corev1.Secret{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			return err
		}
		got.Data = obj.Data
		err = cl.Update(ctx, got)
	}
	if err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return nil
}

// progress reports a wait: a line when what is waited on changes, and
// every 15 seconds while it does not, with the time since init began.
type progress struct {
	step     func(string, ...any)
	last     string
	lastShow time.Time
}

func (p *progress) show(msg string) {
	if msg == p.last && time.Since(p.lastShow) < 15*time.Second {
		return
	}
	p.last, p.lastShow = msg, time.Now()
	p.step("%s", msg)
}

// pollUntil calls check every second until it is done, ctx ends or timeout
// (0: none) passes; the error then says what was last waited on.
func pollUntil(ctx context.Context, timeout time.Duration, check func(ctx context.Context) (bool, string, error)) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := ""
	for {
		done, msg, err := check(ctx)
		if err != nil {
			return msg, err
		}
		if done {
			return msg, nil
		}
		last = msg
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-tick.C:
		}
	}
}

// waitOperator waits until the operator's Deployment is available.
func waitOperator(ctx context.Context, cl client.Client, namespace, image string, timeout time.Duration, started time.Time, step func(string, ...any)) error {
	pr := &progress{step: step}
	last, err := pollUntil(ctx, timeout, func(ctx context.Context) (bool, string, error) {
		d := &appsv1.Deployment{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: operatorRelease}, d); err != nil {
			msg := fmt.Sprintf("waiting for the operator's Deployment %s/%s: %v", namespace, operatorRelease, err)
			pr.show(msg)
			return false, msg, nil
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		if d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want {
			step("The operator is running (Deployment %s/%s)", namespace, operatorRelease)
			return true, "", nil
		}
		msg := fmt.Sprintf("waiting for the operator's Deployment %s/%s: %d of %d replicas available", namespace, operatorRelease, d.Status.AvailableReplicas, want)
		pr.show(msg)
		return false, msg, nil
	})
	if err != nil {
		return fmt.Errorf("%s after %s: %w; see `kubectl -n %s describe deployment %s` and its pods' events (is the image %s pullable?), then run init again",
			last, time.Since(started).Round(time.Second), err, namespace, operatorRelease, image)
	}
	return nil
}

// waitKarmadaReady waits until the Karmada is Ready at its generation,
// showing the phase the operator is at.
func waitKarmadaReady(ctx context.Context, cl client.Client, key client.ObjectKey, timeout time.Duration, started time.Time, step func(string, ...any)) (*operatorv1alpha1.Karmada, error) {
	pr := &progress{step: step}
	k := &operatorv1alpha1.Karmada{}
	last, err := pollUntil(ctx, timeout, func(ctx context.Context) (bool, string, error) {
		if err := cl.Get(ctx, key, k); err != nil {
			return false, "", fmt.Errorf("reading Karmada %s: %w", key, err)
		}
		c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady)
		if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == k.Generation && k.Status.SecretRef != nil {
			return true, "", nil
		}
		msg := "waiting for the operator to pick up Karmada " + key.String()
		if c != nil {
			msg = fmt.Sprintf("waiting for Karmada %s: %s: %s", key, c.Reason, c.Message)
			if c.Reason == operatorv1alpha1.ReasonValidationError {
				return false, msg, errors.New("the operator refused the Karmada")
			}
		}
		pr.show(msg)
		return false, msg, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s after %s: %w; see `kubectl -n %s describe karmada %s` and `kubectl -n %s logs deployment/%s`; run init again to keep waiting (it resumes), or raise --wait-component-ready-timeout",
			last, time.Since(started).Round(time.Second), err, key.Namespace, key.Name, key.Namespace, operatorRelease)
	}
	return k, nil
}

func readyMessage(k *operatorv1alpha1.Karmada) string {
	if c := meta.FindStatusCondition(k.Status.Conditions, operatorv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// writeAdminKubeconfig copies the operator's admin kubeconfig to
// <dir>/karmada-apiserver.config, pointing it at the API server's NodePort
// on advertise when given.
func writeAdminKubeconfig(ctx context.Context, cl client.Client, k *operatorv1alpha1.Karmada, advertise, dir string) (string, error) {
	ref := k.Status.SecretRef
	sec := &corev1.Secret{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		return "", fmt.Errorf("reading the admin kubeconfig Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	cfg, err := clientcmd.Load(sec.Data["kubeconfig"])
	if err != nil {
		return "", fmt.Errorf("the admin kubeconfig in Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if advertise != "" {
		svc := &corev1.Service{}
		name := k.Name + "-apiserver"
		if k.Status.APIServerService != nil {
			name = k.Status.APIServerService.Name
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: name}, svc); err != nil {
			return "", fmt.Errorf("reading the API server's Service: %w", err)
		}
		if len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort == 0 {
			return "", fmt.Errorf("the API server's Service %s/%s has no node port yet: run init again", k.Namespace, name)
		}
		for _, c := range cfg.Clusters {
			c.Server = fmt.Sprintf("https://%s", net.JoinHostPort(advertise, fmt.Sprint(svc.Spec.Ports[0].NodePort)))
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("--karmada-data: %w", err)
	}
	path := filepath.Join(dir, kubeconfigFile)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("--karmada-data: writing the admin kubeconfig: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("--karmada-data: %w", err)
	}
	return path, nil
}

// confirm asks on in whether to go on; only "y" or "yes" is yes.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprintf(out, "%s [y/N]: ", question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
