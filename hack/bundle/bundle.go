// Package bundle packages the Flotilla operator for the Operator Lifecycle
// Manager: it renders config/default, merges the operator's Deployment,
// ServiceAccount and RBAC into the ClusterServiceVersion of
// config/manifests/bases, and writes an OLM bundle (manifests/, metadata/,
// tests/scorecard/), its Dockerfile, and the bundle's entry in the
// file-based catalog. `make bundle` runs it through ./cmd; the e2e test of
// upgrades calls it to make the next bundle of the upgrade graph.
package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	opversion "github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/versions"
)

// Package is the OLM package name of the operator.
const Package = "flotilla-operator"

// BundleRepository is the image repository of the operator's bundle under a
// registry.
const BundleRepository = "operator-bundle"

// Paths in the repository, relative to its root.
const (
	defaultKustomization = "config/default"
	csvBase              = "config/manifests/bases/flotilla-operator.clusterserviceversion.yaml"
	defaultSample        = "config/samples/operator_v1alpha1_karmada.yaml"
	bundleDir            = "bundle"
	dockerfile           = "bundle.Dockerfile"
	catalogFile          = "catalog/flotilla-operator/catalog.yaml"
)

// watchNamespaceEnv carries the namespaces of the operator's OperatorGroup,
// which OLM writes into the olm.targetNamespaces annotation of the
// Deployment's pods: empty for AllNamespaces, one namespace for OwnNamespace
// and SingleNamespace, which is what --watch-namespace takes.
const watchNamespaceEnv = "WATCH_NAMESPACE"

// Options say which bundle to make.
type Options struct {
	// Root is the repository's root; config/ is read from it.
	Root string
	// Version of the bundle, "vX.Y.Z". Default: internal/release.Version.
	Version string
	// Previous is the version this one replaces, "" for none.
	Previous string
	// Channels the bundle is in; default ["alpha"].
	Channels []string
	// DefaultChannel of the package; default the first of Channels.
	DefaultChannel string
	// Registry of the operator's and the bundle's images; default
	// internal/release.DefaultRegistry.
	Registry string
	// OperatorImage is the operator's image; default the release's
	// operator image at Version under Registry.
	OperatorImage string
	// BundleImage is the bundle image the catalog names; default
	// Registry/operator-bundle:Version.
	BundleImage string
	// CreatedAt, when set, is written into the createdAt annotation. It is
	// left out by default, so that the same tree makes the same bundle.
	CreatedAt time.Time
	// Samples are the files (relative to Root) whose objects become
	// alm-examples, in order; default the Karmada sample.
	Samples []string
}

func (o *Options) complete() error {
	if o.Root == "" {
		o.Root = "."
	}
	if o.Version == "" {
		o.Version = release.Version
	}
	v, err := parseVersion(o.Version)
	if err != nil {
		return err
	}
	if o.Previous != "" {
		p, err := parseVersion(o.Previous)
		if err != nil {
			return err
		}
		if !p.LT(v) {
			return fmt.Errorf("previous version %s is not older than %s", o.Previous, o.Version)
		}
	}
	if len(o.Channels) == 0 {
		o.Channels = []string{"alpha"}
	}
	if o.DefaultChannel == "" {
		o.DefaultChannel = o.Channels[0]
	}
	if o.Registry == "" {
		o.Registry = release.DefaultRegistry
	}
	if o.OperatorImage == "" {
		o.OperatorImage = release.Operator.Image(o.Registry, o.Version)
	}
	if o.BundleImage == "" {
		o.BundleImage = strings.TrimSuffix(o.Registry, "/") + "/" + BundleRepository + ":" + o.Version
	}
	if len(o.Samples) == 0 {
		o.Samples = []string{defaultSample}
	}
	return nil
}

// parseVersion parses "vX.Y.Z" (the v is required, as in release.Version).
func parseVersion(v string) (semver.Version, error) {
	if !strings.HasPrefix(v, "v") {
		return semver.Version{}, fmt.Errorf("version %q: want vX.Y.Z", v)
	}
	parsed, err := semver.Parse(strings.TrimPrefix(v, "v"))
	if err != nil {
		return semver.Version{}, fmt.Errorf("version %q: %w", v, err)
	}
	return parsed, nil
}

// CSVName is the ClusterServiceVersion's name of a version "vX.Y.Z".
func CSVName(version string) string { return Package + "." + version }

// Bundle is a generated bundle, in memory.
type Bundle struct {
	Options Options
	// CSV is the ClusterServiceVersion.
	CSV *operatorsv1alpha1.ClusterServiceVersion
	// CRDs are the CustomResourceDefinitions the CSV owns.
	CRDs []*unstructured.Unstructured
	// Extra are other objects of config/default that OLM creates beside
	// the operator (the metrics Service), without a namespace.
	Extra []*unstructured.Unstructured
}

// Build renders config/default and makes the bundle of opts.
func Build(opts Options) (*Bundle, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	objs, err := render(filepath.Join(opts.Root, defaultKustomization))
	if err != nil {
		return nil, err
	}
	csv, err := readCSVBase(filepath.Join(opts.Root, csvBase))
	if err != nil {
		return nil, err
	}
	b := &Bundle{Options: opts, CSV: csv}
	if err := b.merge(objs); err != nil {
		return nil, err
	}
	if err := b.setMetadata(); err != nil {
		return nil, err
	}
	return b, nil
}

// render runs kustomize on dir, as `kustomize build dir` would.
func render(dir string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	out := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, r := range resMap.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func readCSVBase(path string) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return csv, nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// rendered is config/default's output, sorted by what OLM does with it.
type rendered struct {
	deployments     []*appsv1.Deployment
	roles           map[string]*unstructured.Unstructured
	clusterRoles    map[string]*unstructured.Unstructured
	roleBindings    []*rbacv1.RoleBinding
	clusterBindings []*rbacv1.ClusterRoleBinding
	serviceAccounts map[string]bool
	crds            []*unstructured.Unstructured
	rest            []*unstructured.Unstructured
}

func classify(objs []*unstructured.Unstructured) (*rendered, error) {
	r := &rendered{
		roles:           map[string]*unstructured.Unstructured{},
		clusterRoles:    map[string]*unstructured.Unstructured{},
		serviceAccounts: map[string]bool{},
	}
	for _, u := range objs {
		var err error
		switch u.GroupVersionKind().GroupKind().String() {
		case "Deployment.apps":
			d := &appsv1.Deployment{}
			err = fromUnstructured(u, d)
			r.deployments = append(r.deployments, d)
		case "Role.rbac.authorization.k8s.io":
			r.roles[u.GetName()] = u
		case "ClusterRole.rbac.authorization.k8s.io":
			r.clusterRoles[u.GetName()] = u
		case "RoleBinding.rbac.authorization.k8s.io":
			rb := &rbacv1.RoleBinding{}
			err = fromUnstructured(u, rb)
			r.roleBindings = append(r.roleBindings, rb)
		case "ClusterRoleBinding.rbac.authorization.k8s.io":
			crb := &rbacv1.ClusterRoleBinding{}
			err = fromUnstructured(u, crb)
			r.clusterBindings = append(r.clusterBindings, crb)
		case "ServiceAccount":
			r.serviceAccounts[u.GetName()] = true
		case "Namespace":
		case "CustomResourceDefinition.apiextensions.k8s.io":
			r.crds = append(r.crds, u)
		default:
			r.rest = append(r.rest, u)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// rulesOf are the rules of a rendered Role or ClusterRole bound to sa.
func (r *rendered) rulesOf(kind, name, sa string) ([]rbacv1.PolicyRule, error) {
	u := r.clusterRoles[name]
	if kind == "Role" {
		u = r.roles[name]
	}
	if u == nil {
		return nil, fmt.Errorf("%s %s is bound to %s but not rendered", kind, name, sa)
	}
	role := &rbacv1.ClusterRole{}
	if err := fromUnstructured(u, role); err != nil {
		return nil, err
	}
	if role.AggregationRule != nil {
		return nil, fmt.Errorf("%s %s aggregates rules, which a CSV cannot carry", kind, name)
	}
	return role.Rules, nil
}

// permissions collects the rules of the roles bound to sa, namespaced
// (RoleBindings) and cluster-wide (ClusterRoleBindings). Bindings of other
// subjects, and roles bound to nobody here, stay in r.rest.
func (r *rendered) permissions(sa string) (namespaced, cluster []rbacv1.PolicyRule, err error) {
	bound := map[string]bool{} // kind/name of the roles that went into the CSV
	for _, rb := range r.roleBindings {
		if !bindsServiceAccount(rb.Subjects, sa) {
			r.rest = append(r.rest, mustUnstructured(rb))
			continue
		}
		rules, err := r.rulesOf(rb.RoleRef.Kind, rb.RoleRef.Name, sa)
		if err != nil {
			return nil, nil, err
		}
		namespaced = append(namespaced, rules...)
		bound[rb.RoleRef.Kind+"/"+rb.RoleRef.Name] = true
	}
	for _, crb := range r.clusterBindings {
		if !bindsServiceAccount(crb.Subjects, sa) {
			r.rest = append(r.rest, mustUnstructured(crb))
			continue
		}
		rules, err := r.rulesOf("ClusterRole", crb.RoleRef.Name, sa)
		if err != nil {
			return nil, nil, err
		}
		cluster = append(cluster, rules...)
		bound["ClusterRole/"+crb.RoleRef.Name] = true
	}
	for _, kind := range []string{"Role", "ClusterRole"} {
		byName := r.roles
		if kind == "ClusterRole" {
			byName = r.clusterRoles
		}
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			if !bound[kind+"/"+name] {
				r.rest = append(r.rest, byName[name])
			}
		}
	}
	return namespaced, cluster, nil
}

// merge sorts the rendered objects the way OLM installs them: the
// Deployment into the install strategy, the rules of the roles bound to
// its ServiceAccount into permissions and clusterPermissions, the CRDs
// beside the CSV; the ServiceAccount and the bindings are left to OLM,
// which creates them from the strategy, and the Namespace to the
// OperatorGroup. Anything else is an extra manifest of the bundle.
func (b *Bundle) merge(objs []*unstructured.Unstructured) error {
	r, err := classify(objs)
	if err != nil {
		return err
	}
	if len(r.deployments) != 1 {
		return fmt.Errorf("config/default renders %d Deployments, want the operator's only", len(r.deployments))
	}
	d := r.deployments[0]
	sa := d.Spec.Template.Spec.ServiceAccountName
	if sa == "" || !r.serviceAccounts[sa] {
		return fmt.Errorf("the operator's Deployment runs as ServiceAccount %q, which config/default does not make", sa)
	}
	if err := b.adaptDeployment(d); err != nil {
		return err
	}
	permissions, clusterPermissions, err := r.permissions(sa)
	if err != nil {
		return err
	}

	strategy := operatorsv1alpha1.StrategyDetailsDeployment{
		DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{Name: d.Name, Label: d.Labels, Spec: d.Spec}},
	}
	if len(permissions) > 0 {
		strategy.Permissions = []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: permissions}}
	}
	if len(clusterPermissions) > 0 {
		strategy.ClusterPermissions = []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: clusterPermissions}}
	}
	b.CSV.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: strategy,
	}

	b.CRDs = r.crds
	for _, u := range r.rest {
		u = u.DeepCopy()
		u.SetNamespace("")
		b.Extra = append(b.Extra, u)
	}
	slices.SortFunc(b.Extra, func(x, y *unstructured.Unstructured) int {
		return strings.Compare(manifestFile(x), manifestFile(y))
	})
	slices.SortFunc(b.CRDs, func(x, y *unstructured.Unstructured) int { return strings.Compare(x.GetName(), y.GetName()) })
	return nil
}

func bindsServiceAccount(subjects []rbacv1.Subject, sa string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa {
			return true
		}
	}
	return false
}

func mustUnstructured(obj runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// adaptDeployment points the operator's container at this version's image
// and has it watch what its OperatorGroup targets.
func (b *Bundle) adaptDeployment(d *appsv1.Deployment) error {
	spec := &d.Spec.Template.Spec
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
	if i < 0 {
		if len(spec.Containers) != 1 {
			return fmt.Errorf("the operator's Deployment has no container named manager")
		}
		i = 0
	}
	c := &spec.Containers[i]
	c.Image = b.Options.OperatorImage
	for _, a := range c.Args {
		if a == "--watch-namespace" || strings.HasPrefix(a, "--watch-namespace=") {
			return nil
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{
		Name: watchNamespaceEnv,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['olm.targetNamespaces']",
		}},
	})
	c.Args = append(c.Args, "--watch-namespace=$("+watchNamespaceEnv+")")
	return nil
}

// setMetadata names and versions the CSV and adds what OLM and
// OperatorHub read from its annotations.
func (b *Bundle) setMetadata() error {
	o := b.Options
	csv := b.CSV
	v, err := parseVersion(o.Version)
	if err != nil {
		return err
	}
	csv.Name = CSVName(o.Version)
	csv.Spec.Version = opversion.OperatorVersion{Version: v}
	csv.Spec.Replaces = ""
	if o.Previous != "" {
		csv.Spec.Replaces = CSVName(o.Previous)
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	examples, err := b.examples()
	if err != nil {
		return err
	}
	csv.Annotations["alm-examples"] = examples
	csv.Annotations["containerImage"] = o.OperatorImage
	csv.Annotations[operatorsv1alpha1.SkipRangeAnnotationKey] = ">=0.0.0 <" + v.String()
	csv.Annotations["operators.operatorframework.io/project_layout"] = "go.kubebuilder.io/v4"
	delete(csv.Annotations, "createdAt")
	if !o.CreatedAt.IsZero() {
		csv.Annotations["createdAt"] = o.CreatedAt.UTC().Format(time.RFC3339)
	}
	related, err := b.relatedImages()
	if err != nil {
		return err
	}
	csv.Spec.RelatedImages = related
	return nil
}

// examples is the alm-examples annotation: the samples' objects as a JSON
// array, without the namespace they are created in.
func (b *Bundle) examples() (string, error) {
	var objs []map[string]any
	for _, f := range b.Options.Samples {
		data, err := os.ReadFile(filepath.Join(b.Options.Root, f))
		if err != nil {
			return "", err
		}
		for _, doc := range splitYAML(data) {
			u := map[string]any{}
			if err := yaml.Unmarshal(doc, &u); err != nil {
				return "", fmt.Errorf("%s: %w", f, err)
			}
			if len(u) == 0 {
				continue
			}
			if md, ok := u["metadata"].(map[string]any); ok {
				delete(md, "namespace")
			}
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 {
		return "", errors.New("no samples for alm-examples")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(objs); err != nil {
		return "", err
	}
	return strings.TrimSpace(buf.String()), nil
}

// relatedImages are the operator's image and every image its version table
// runs at this version, so that a mirror for a disconnected cluster knows
// what to copy.
func (b *Bundle) relatedImages() ([]operatorsv1alpha1.RelatedImage, error) {
	table, err := versions.Builtin()
	if err != nil {
		return nil, err
	}
	r := table.Own()
	r.Version = b.Options.Version
	out := []operatorsv1alpha1.RelatedImage{{Name: "flotilla-operator", Image: b.Options.OperatorImage}}
	for _, c := range []release.Component{release.ControllerManager, release.Scheduler, release.Descheduler, release.Webhook, release.AggregatedAPIServer, release.Etcd, release.KubeAPIServer, release.KubeControllerManager} {
		registry := ""
		if c.Own() {
			registry = b.Options.Registry
		}
		out = append(out, operatorsv1alpha1.RelatedImage{Name: string(c), Image: r.Image(c, registry)})
	}
	return out, nil
}

// splitYAML splits a multi-document YAML stream.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, "\r\n") == "---" {
			docs = append(docs, []byte(strings.Join(cur, "")))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(docs, []byte(strings.Join(cur, "")))
}
