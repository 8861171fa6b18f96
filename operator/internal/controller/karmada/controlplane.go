package karmada

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/apiservice"
	webhookapp "github.com/flotilla-io/flotilla/components/webhook/app"
	"github.com/flotilla-io/flotilla/config/crd"
	"github.com/flotilla-io/flotilla/config/rbac"
	webhookconfig "github.com/flotilla-io/flotilla/config/webhook"
	"github.com/flotilla-io/flotilla/operator/internal/certs"
)

// fieldOwner is the operator's name in the managed fields of what it
// applies to an instance's API server.
const fieldOwner = "flotilla-operator"

// contentsRecheck is how long applied contents are trusted before they are
// applied again, which puts back CRDs or RBAC a person deleted.
const contentsRecheck = 10 * time.Minute

// The namespaces every Karmada control plane has.
var systemNamespaces = []string{"karmada-system", "karmada-cluster"}

// ControlPlanes holds a client per instance's API server, made from the
// instance's admin credentials, and what was applied to it.
type ControlPlanes struct {
	// Dial, when set, opens connections to the API servers; the operator's
	// tests reach Services of their host cluster through it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Timeout of one request; default 30s.
	Timeout time.Duration

	mu     sync.Mutex
	scheme *runtime.Scheme
	byUID  map[types.UID]*controlPlane
}

type controlPlane struct {
	key       string // digest of the endpoint and credentials
	config    *rest.Config
	client    client.Client
	discovery discovery.DiscoveryInterface

	applied   string // digest of the contents last applied
	appliedAt time.Time
	// admitted is the same for the webhook configurations.
	admitted   string
	admittedAt time.Time
	// registered is the same for the aggregated API server's APIService
	// and Service.
	registered   string
	registeredAt time.Time
}

// For returns the client of an instance's API server, made anew when its
// address or credentials changed. The operator connects to the Service's
// ClusterIP, verifying the certificate against the Service's DNS name: it
// needs no cluster DNS, only the Service network every pod has.
func (c *ControlPlanes) For(_ context.Context, k *operatorv1alpha1.Karmada, in *inputs, svc *corev1.Service) (*controlPlane, error) {
	ca := in.pki.bundles[certs.IDCA]
	admin := in.pki.pairs[certs.IDAdmin]
	serverName := fmt.Sprintf("%s.%s.svc.%s", svc.Name, svc.Namespace, in.domain)
	server := "https://" + net.JoinHostPort(serverName, strconv.Itoa(apiServerPort))
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		server = "https://" + net.JoinHostPort(ip, strconv.Itoa(apiServerPort))
	}
	key := digestOf(server, ca, admin.CertPEM, admin.KeyPEM)

	c.mu.Lock()
	defer c.mu.Unlock()
	if cp, ok := c.byUID[k.UID]; ok && cp.key == key {
		return cp, nil
	}
	if c.scheme == nil {
		c.scheme = runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
			if err := add(c.scheme); err != nil {
				return nil, err
			}
		}
		c.byUID = map[types.UID]*controlPlane{}
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	cfg := &rest.Config{
		Host:            server,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: admin.CertPEM, KeyData: admin.KeyPEM, ServerName: serverName},
		Timeout:         timeout,
		Dial:            c.Dial,
		UserAgent:       fieldOwner,
		QPS:             50,
		Burst:           100,
	}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme})
	if err != nil {
		return nil, fmt.Errorf("client of the API server %s: %w", server, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{key: key, config: cfg, client: cl, discovery: dc}
	c.byUID[k.UID] = cp
	return cp, nil
}

// Forget drops an instance's client.
func (c *ControlPlanes) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byUID, uid)
}

// ensureContents puts into the instance's API server what the controllers
// need before they start: Flotilla's CRDs (built into the operator, never
// downloaded), the karmada-system and karmada-cluster namespaces, and a
// ClusterRole and binding per component identity. It returns the API
// server's Kubernetes version, and whether everything is in place.
func (r *Reconciler) ensureContents(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs, cp *controlPlane) (string, bool, string, error) {
	info, err := cp.discovery.ServerVersion()
	if err != nil {
		return "", false, fmt.Sprintf("API server contents: waiting for the API server to answer: %v", err), nil
	}
	static, err := embeddedContents()
	if err != nil {
		return "", false, "", err
	}
	url, ca := webhookURL(k), in.pki.bundles[certs.IDCA]
	digest := digestOf(static.digest, []byte(url), ca)
	if cp.applied == digest && r.now().Sub(cp.appliedAt) < contentsRecheck {
		return info.GitVersion, true, "", nil
	}
	objs := static.objects(url, ca)
	for _, obj := range objs {
		if err := apply(ctx, cp.client, obj); err != nil {
			return "", false, "", err
		}
	}
	for _, obj := range objs {
		c, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := cp.client.Get(ctx, client.ObjectKeyFromObject(c), got); err != nil {
			return "", false, "", fmt.Errorf("reading CRD %s: %w", c.Name, err)
		}
		if !established(got) {
			return "", false, fmt.Sprintf("API server contents: waiting for CRD %s to be established", c.Name), nil
		}
	}
	cp.applied, cp.appliedAt = digest, r.now()
	return info.GitVersion, true, "", nil
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// componentRoles binds each component's certificate identity to the
// ClusterRole generated from its RBAC markers.
var componentRoles = map[string]string{
	"flotilla-controller-manager": certs.ControllerManagerUser,
	"flotilla-scheduler":          certs.SchedulerUser,
	"flotilla-descheduler":        certs.DeschedulerUser,
	"flotilla-webhook":            certs.WebhookUser,
	// Its delegated authentication also reads the ConfigMap
	// kube-system/extension-apiserver-authentication, which the role
	// grants with every ConfigMap: Kubernetes' own
	// extension-apiserver-authentication-reader Role is namespaced.
	"flotilla-aggregated-apiserver": certs.AggregatedAPIServerUser,
}

// staticContents are the objects ensureContents applies, parsed from the
// files built into the operator. They never change while it runs, so they
// are parsed once (embeddedContents) rather than on every pass: the CRDs
// alone are over half a megabyte of YAML.
type staticContents struct {
	objs []client.Object
	// conversions are the CRDs' conversion stanzas by CRD name, whose
	// webhook address and CA each instance fills in.
	conversions map[string]*apiextensionsv1.CustomResourceConversion
	digest      string
}

// embeddedContents parses the operator's embedded contents once per process.
var embeddedContents = sync.OnceValues(parseContents)

// objects are the contents for one instance: CRDs served in several
// versions convert through the webhook at webhookURL, trusted by caBundle.
func (c *staticContents) objects(webhookURL string, caBundle []byte) []client.Object {
	out := make([]client.Object, 0, len(c.objs))
	for _, obj := range c.objs {
		obj = obj.DeepCopyObject().(client.Object)
		if def, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			if conv, ok := c.conversions[def.Name]; ok {
				conv = conv.DeepCopy()
				url := webhookURL + ptr.Deref(conv.Webhook.ClientConfig.Service.Path, "/convert")
				conv.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
				def.Spec.Conversion = conv
			}
		}
		out = append(out, obj)
	}
	return out
}

func parseContents() (*staticContents, error) {
	c := &staticContents{conversions: map[string]*apiextensionsv1.CustomResourceConversion{}}
	for _, ns := range systemNamespaces {
		c.objs = append(c.objs, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns},
		})
	}
	sum := sha256.New()
	err := fs.WalkDir(crd.Bases, "bases", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(crd.Bases, path)
		if err != nil {
			return err
		}
		sum.Write(data)
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		obj.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
		c.objs = append(c.objs, obj)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the embedded CRDs: %w", err)
	}
	err = fs.WalkDir(rbac.Roles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(rbac.Roles, path)
		if err != nil {
			return err
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(data, role); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// The operator's own role is for its host cluster, not for the
		// control planes it makes.
		user, ok := componentRoles[role.Name]
		if !ok {
			return nil
		}
		sum.Write(data)
		role.TypeMeta = metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}
		c.objs = append(c.objs, role, &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the embedded ClusterRoles: %w", err)
	}
	c.objs = append(c.objs, proxyAdmin()...)
	files, err := fs.Glob(webhookconfig.Conversion, "conversion/*.yaml")
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		data, err := fs.ReadFile(webhookconfig.Conversion, file)
		if err != nil {
			return nil, err
		}
		sum.Write(data)
		patch := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, patch); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		conv := patch.Spec.Conversion
		if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || conv.Webhook.ClientConfig.Service == nil {
			return nil, fmt.Errorf("%s: no conversion webhook service", file)
		}
		c.conversions[patch.Name] = conv
	}
	c.digest = hex.EncodeToString(sum.Sum(nil))
	return c, nil
}

// proxyAdminName names the ClusterRole and ClusterRoleBinding letting the
// admin kubeconfig's user proxy to every member, Karmada operator's.
const proxyAdminName = "cluster-proxy-admin"

// proxyAdmin binds the administrator's user to clusters/proxy, as Karmada
// does: system:masters may proxy in the control plane anyway, but the
// unified-auth controller lets the members' impersonators impersonate only
// users bound to it by name.
func proxyAdmin() []client.Object {
	return []client.Object{
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: proxyAdminName},
			Rules: []rbacv1.PolicyRule{{
				Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"},
			}},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: proxyAdminName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: proxyAdminName},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: certs.AdminUser}},
		},
	}
}

// digestOf is a digest of its parts, each kept apart from the next.
func digestOf(parts ...any) string {
	sum := sha256.New()
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			sum.Write([]byte(v))
		case []byte:
			sum.Write(v)
		}
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// webhookURL is where the instance's API server calls its webhook: the
// webhook Service's DNS name, which its serving certificate names.
func webhookURL(k *operatorv1alpha1.Karmada) string {
	return fmt.Sprintf("https://%s.%s.svc:443", releaseName(k.Name, Webhook), k.Namespace)
}

// ensureAdmission registers the webhook configurations, with every webhook
// called at the instance's webhook Service.
func (r *Reconciler) ensureAdmission(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs, cp *controlPlane) error {
	url, ca := webhookURL(k), in.pki.bundles[certs.IDCA]
	digest := digestOf(webhookconfig.Manifests, []byte(url), ca)
	if cp.admitted == digest && r.now().Sub(cp.admittedAt) < contentsRecheck {
		return nil
	}
	objs, err := webhookapp.Configurations(url, ca)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		gvk := schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
		if _, ok := obj.(*admissionregistrationv1.MutatingWebhookConfiguration); ok {
			gvk.Kind = "MutatingWebhookConfiguration"
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if err := apply(ctx, cp.client, obj); err != nil {
			return err
		}
	}
	cp.admitted, cp.admittedAt = digest, r.now()
	return nil
}

// aggregatedServiceName is the host Service of the instance's aggregated
// API server, which the control plane's ExternalName Service
// karmada-system/karmada-aggregated-apiserver names, as in Karmada's
// operator.
func aggregatedServiceName(k *operatorv1alpha1.Karmada, domain string) string {
	return fmt.Sprintf("%s.%s.svc.%s", releaseName(k.Name, AggregatedAPIServer), k.Namespace, domain)
}

// ensureAggregation registers the aggregated API server in the instance's
// API server (apiservice.Apply: the ExternalName Service and the
// APIService v1alpha1.cluster.karmada.io, taken over from the Cluster CRD),
// and reports whether the API server finds it available. Clusters stay in
// etcd where the CRD kept them, so an upgraded instance keeps its members.
func (r *Reconciler) ensureAggregation(ctx context.Context, k *operatorv1alpha1.Karmada, in *inputs, cp *controlPlane) (bool, string, error) {
	reg := apiservice.Registration{
		Namespace:    "karmada-system",
		ExternalName: aggregatedServiceName(k, in.domain),
		Port:         aggregatedServicePort,
		CABundle:     in.pki.bundles[certs.IDCA],
	}
	digest := digestOf(reg.Namespace, reg.ExternalName, strconv.Itoa(int(reg.Port)), reg.CABundle)
	if cp.registered != digest || r.now().Sub(cp.registeredAt) >= contentsRecheck {
		if err := apiservice.Apply(ctx, cp.config, reg); err != nil {
			return false, "", err
		}
		cp.registered, cp.registeredAt = digest, r.now()
	}
	ok, msg, err := apiservice.Available(ctx, cp.config)
	if err != nil {
		return false, "", err
	}
	return ok, msg, nil
}

// apply server-side applies obj as the operator, taking over fields someone
// else set: the operator's version of these objects is the one wanted.
func apply(ctx context.Context, c client.Client, obj client.Object) error {
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	cfg := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
	if err := c.Apply(ctx, cfg, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s to the API server: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return nil
}
