package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/release"
)

// Paths of the repository seen from this package.
var (
	defaultDir = filepath.Join("..", "..", "config", "default")
	samplesDir = filepath.Join("..", "..", "config", "samples")
	rbacDir    = filepath.Join("..", "..", "config", "rbac")
)

const namespace = "flotilla-system"

// objectID is what names an object on a cluster.
type objectID struct{ Kind, Namespace, Name string }

func idOf(u *unstructured.Unstructured) objectID {
	return objectID{u.GetKind(), u.GetNamespace(), u.GetName()}
}

// wantObjects is config/default: the operator, its API and its RBAC, and
// nothing that belongs in a control plane.
var wantObjects = []objectID{
	{"Namespace", "", namespace},
	{"CustomResourceDefinition", "", "karmadas.operator.karmada.io"},
	{"ServiceAccount", namespace, "flotilla-operator"},
	{"ClusterRole", "", "flotilla-operator-flotilla-system"},
	{"ClusterRoleBinding", "", "flotilla-operator-flotilla-system"},
	{"Role", namespace, "flotilla-operator-leader-election"},
	{"RoleBinding", namespace, "flotilla-operator-leader-election"},
	{"Service", namespace, "flotilla-operator-metrics"},
	{"Deployment", namespace, "flotilla-operator"},
}

// rendered is config/default decoded into client-go types.
type rendered struct {
	all                []*unstructured.Unstructured
	namespace          *corev1.Namespace
	crd                *apiextensionsv1.CustomResourceDefinition
	serviceAccount     *corev1.ServiceAccount
	clusterRole        *rbacv1.ClusterRole
	clusterRoleBinding *rbacv1.ClusterRoleBinding
	role               *rbacv1.Role
	roleBinding        *rbacv1.RoleBinding
	service            *corev1.Service
	deployment         *appsv1.Deployment
}

func mustRender(t *testing.T, image string) rendered {
	t.Helper()
	objs, err := Render(defaultDir, image)
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{all: objs}
	for _, u := range objs {
		var into any
		switch u.GetKind() {
		case "Namespace":
			r.namespace = &corev1.Namespace{}
			into = r.namespace
		case "CustomResourceDefinition":
			r.crd = &apiextensionsv1.CustomResourceDefinition{}
			into = r.crd
		case "ServiceAccount":
			r.serviceAccount = &corev1.ServiceAccount{}
			into = r.serviceAccount
		case "ClusterRole":
			r.clusterRole = &rbacv1.ClusterRole{}
			into = r.clusterRole
		case "ClusterRoleBinding":
			r.clusterRoleBinding = &rbacv1.ClusterRoleBinding{}
			into = r.clusterRoleBinding
		case "Role":
			r.role = &rbacv1.Role{}
			into = r.role
		case "RoleBinding":
			r.roleBinding = &rbacv1.RoleBinding{}
			into = r.roleBinding
		case "Service":
			r.service = &corev1.Service{}
			into = r.service
		case "Deployment":
			r.deployment = &appsv1.Deployment{}
			into = r.deployment
		default:
			t.Fatalf("unexpected %s %s", u.GetKind(), u.GetName())
		}
		decodeStrict(t, u, into)
	}
	return r
}

// decodeStrict decodes u into its client-go type, refusing unknown fields.
func decodeStrict(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func TestRenderObjects(t *testing.T) {
	r := mustRender(t, "")
	got := make([]objectID, 0, len(r.all))
	for _, u := range r.all {
		got = append(got, idOf(u))
	}
	sortIDs := func(ids []objectID) {
		slices.SortFunc(ids, func(a, b objectID) int {
			return strings.Compare(a.Kind+"/"+a.Namespace+"/"+a.Name, b.Kind+"/"+b.Namespace+"/"+b.Name)
		})
	}
	want := slices.Clone(wantObjects)
	sortIDs(want)
	sortIDs(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config/default objects (-want +got):\n%s", diff)
	}
	for _, u := range r.all {
		l := u.GetLabels()
		if l["app.kubernetes.io/part-of"] != "flotilla" {
			t.Errorf("%s %s: labels %v lack part-of=flotilla", u.GetKind(), u.GetName(), l)
		}
		if u.GetKind() != "CustomResourceDefinition" && l["app.kubernetes.io/name"] != "flotilla-operator" {
			t.Errorf("%s %s: labels %v lack name=flotilla-operator", u.GetKind(), u.GetName(), l)
		}
	}
}

// TestRenderNothingForControlPlanes: the components' ClusterRoles and the
// federation's CRDs go into the control planes the operator makes, never
// onto the cluster the operator runs on.
func TestRenderNothingForControlPlanes(t *testing.T) {
	r := mustRender(t, "")
	federationCRDs, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(federationCRDs) == 0 {
		t.Fatalf("no federation CRDs in config/crd/bases: %v", err)
	}
	forbidden := map[string]bool{}
	for _, f := range federationCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		readYAML(t, f, crd)
		forbidden["CustomResourceDefinition/"+crd.Name] = true
	}
	for _, component := range []string{"controller-manager", "scheduler", "webhook"} {
		role := &rbacv1.ClusterRole{}
		readYAML(t, filepath.Join(rbacDir, component, "role.yaml"), role)
		forbidden["ClusterRole/"+role.Name] = true
		forbidden["ClusterRole/flotilla-"+role.Name] = true
	}
	for _, u := range r.all {
		if forbidden[u.GetKind()+"/"+u.GetName()] {
			t.Errorf("config/default has %s %s, which belongs in control planes only", u.GetKind(), u.GetName())
		}
	}
	if r.crd.Spec.Group != "operator.karmada.io" || r.crd.Spec.Names.Kind != "Karmada" {
		t.Errorf("CRD %s: want the operator's Karmada only", r.crd.Name)
	}
}

func TestRenderRBAC(t *testing.T) {
	r := mustRender(t, "")
	generated := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(rbacDir, "operator", "role.yaml"), generated)
	if diff := cmp.Diff(generated.Rules, r.clusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules differ from config/rbac/operator/role.yaml (-generated +rendered):\n%s", diff)
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: r.serviceAccount.Name, Namespace: namespace}
	if diff := cmp.Diff([]rbacv1.Subject{sa}, r.clusterRoleBinding.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
	}
	if want := (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.clusterRole.Name}); r.clusterRoleBinding.RoleRef != want {
		t.Errorf("ClusterRoleBinding roleRef %+v, want %+v", r.clusterRoleBinding.RoleRef, want)
	}
	if diff := cmp.Diff([]rbacv1.Subject{sa}, r.roleBinding.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects (-want +got):\n%s", diff)
	}
	if want := (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.role.Name}); r.roleBinding.RoleRef != want {
		t.Errorf("RoleBinding roleRef %+v, want %+v", r.roleBinding.RoleRef, want)
	}
	if !allows(r.role.Rules, "coordination.k8s.io", "leases", "get", "create", "update") {
		t.Errorf("leader election Role does not allow the Lease: %+v", r.role.Rules)
	}
	for _, group := range []string{"", "events.k8s.io"} {
		if !allows(r.role.Rules, group, "events", "create", "patch") {
			t.Errorf("leader election Role does not allow events of group %q: %+v", group, r.role.Rules)
		}
	}
}

// allows reports whether rules grant every verb on res of group.
func allows(rules []rbacv1.PolicyRule, group, res string, verbs ...string) bool {
	for _, verb := range verbs {
		if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, verb)
		}) {
			return false
		}
	}
	return true
}

func TestRenderDeployment(t *testing.T) {
	r := mustRender(t, "")
	d := r.deployment
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want the manager only", len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := release.Operator.Image("", release.Version); c.Image != want {
		t.Errorf("image %q, want this release's %q (config/manager/kustomization.yaml, images)", c.Image, want)
	}
	if diff := cmp.Diff([]string{"/" + release.Operator.Binary()}, c.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	wantArgs := []string{"--leader-elect", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("probes")}}}
	}
	if got := c.LivenessProbe; got == nil || got.HTTPGet == nil || !cmp.Equal(probe("/healthz").HTTPGet, got.HTTPGet) {
		t.Errorf("liveness probe %+v, want GET /healthz on probes", got)
	}
	if got := c.ReadinessProbe; got == nil || got.HTTPGet == nil || !cmp.Equal(probe("/readyz").HTTPGet, got.HTTPGet) {
		t.Errorf("readiness probe %+v, want GET /readyz on probes", got)
	}
	wantPorts := []corev1.ContainerPort{
		{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "probes", ContainerPort: 8081, Protocol: corev1.ProtocolTCP},
	}
	if diff := cmp.Diff(wantPorts, c.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}

	// The operator's own pod meets the restricted Pod Security Standard.
	wantPodSC := &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		RunAsGroup:     ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if diff := cmp.Diff(wantPodSC, pod.SecurityContext); diff != "" {
		t.Errorf("pod securityContext (-want +got):\n%s", diff)
	}
	wantSC := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if diff := cmp.Diff(wantSC, c.SecurityContext); diff != "" {
		t.Errorf("container securityContext (-want +got):\n%s", diff)
	}
	// Karmadas in the operator's namespace get etcd and Kubernetes pods
	// that run as root: the namespace must not refuse them.
	if level, ok := r.namespace.Labels["pod-security.kubernetes.io/enforce"]; ok && level != "privileged" {
		t.Errorf("namespace enforces Pod Security %q, which refuses the control planes' root pods", level)
	}

	// Sized for the operator: its measured peak (about 120 MiB with a few
	// instances) fits in the request, and the limit leaves room to grow.
	res := c.Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := res.Requests[name]; !ok {
			t.Errorf("no %s request", name)
		}
		if _, ok := res.Limits[name]; !ok {
			t.Errorf("no %s limit", name)
		}
	}
	if req := res.Requests[corev1.ResourceMemory]; req.Cmp(resource.MustParse("120Mi")) < 0 {
		t.Errorf("memory request %s is below the operator's measured peak of 120Mi", req.String())
	}
	if limit, req := res.Limits[corev1.ResourceMemory], res.Requests[corev1.ResourceMemory]; limit.Cmp(req) <= 0 {
		t.Errorf("memory limit %s does not exceed the request %s", limit.String(), req.String())
	}

	if pod.ServiceAccountName != r.serviceAccount.Name {
		t.Errorf("serviceAccountName %q, want %q", pod.ServiceAccountName, r.serviceAccount.Name)
	}
	if pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken {
		t.Error("the operator needs its service account's token")
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 30 {
		t.Errorf("terminationGracePeriodSeconds %v: want at least the manager's 30-second graceful shutdown", g)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1", d.Spec.Replicas)
	}
	selector := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
	if !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("selector %v does not match the pod's labels %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
}

func TestRenderMetricsService(t *testing.T) {
	r := mustRender(t, "")
	s := r.service
	if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(r.deployment.Spec.Template.Labels)) {
		t.Errorf("Service selector %v does not select the operator's pods %v", s.Spec.Selector, r.deployment.Spec.Template.Labels)
	}
	want := []corev1.ServicePort{{Name: "metrics", Port: 8080, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, s.Spec.Ports); diff != "" {
		t.Errorf("metrics Service ports (-want +got):\n%s", diff)
	}
}

func TestRenderImageOverride(t *testing.T) {
	const image = "registry.example/flotilla/operator:dev"
	r := mustRender(t, image)
	if got := r.deployment.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("image %q, want %q", got, image)
	}
}

func TestRenderSamples(t *testing.T) {
	objs, err := Render(samplesDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Karmada" || objs[0].GetAPIVersion() != "operator.karmada.io/v1alpha1" {
		t.Fatalf("config/samples: want the one Karmada sample, got %d objects", len(objs))
	}
}

// TestRBACEmbedUnchanged: the files added for the operator's RBAC must not
// be picked up by config/rbac's embed (*/role.yaml), which the operator
// installs into every control plane it makes.
func TestRBACEmbedUnchanged(t *testing.T) {
	roles, err := filepath.Glob(filepath.Join(rbacDir, "*", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(roles))
	for _, r := range roles {
		dirs = append(dirs, filepath.Base(filepath.Dir(r)))
	}
	if diff := cmp.Diff([]string{"aggregated-apiserver", "controller-manager", "descheduler", "operator", "scheduler", "scheduler-estimator", "webhook"}, dirs); diff != "" {
		t.Errorf("config/rbac/*/role.yaml (-want +got):\n%s", diff)
	}
}

func readYAML(t *testing.T, path string, into runtime.Object) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
