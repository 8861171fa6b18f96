package operator

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/hack/bundle"
	"github.com/flotilla-io/flotilla/internal/release"
)

// buildNextOperator builds the operator as the newer release of the
// upgrade (release.Version set at link time, as release builds do) and
// maps that release's operator image to it: the operator the next bundle
// of the upgrade graph runs.
func buildNextOperator(ctx context.Context, root, out string, images map[string]string) error {
	bin := filepath.Join(out, release.Operator.Binary()+"-"+newRelease.Version)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"-ldflags", "-X github.com/flotilla-io/flotilla/internal/release.Version="+newRelease.Version, "./operator/cmd")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the operator %s: %w\n%s", newRelease.Version, err, b)
	}
	images[newRelease.Image(release.Operator, "")] = bin
	return nil
}

// olmInstall is what OLM creates on the cluster for one CSV, so that the
// test can remove it as OLM does when the CSV is replaced or deleted.
type olmInstall struct {
	csv     *operatorsv1alpha1.ClusterServiceVersion
	created []client.Object
}

// TestInstallFromBundle installs the operator exactly as its bundle's
// ClusterServiceVersion describes it, in OwnNamespace mode (so that it
// reconciles only its own namespace), as OLM would with an OperatorGroup
// targeting that namespace: the bundle's CRD, the ServiceAccount, Roles
// and ClusterRoles with their bindings from the CSV's permissions, the
// Deployment of its install strategy, and the bundle's other manifests.
// The operator runs as a pod on the node agent with in-cluster credentials
// from its ServiceAccount. The sample Karmada becomes Ready. Then the next
// bundle along the upgrade graph (v0.2.0, replacing v0.1.0, made with
// hack/bundle) is installed as OLM upgrades: new RBAC, the Deployment
// replaced in place, the old CSV's RBAC removed. The instance is upgraded
// by the new operator with nothing lost.
//
// It runs after TestControlPlaneLifecycle (files run in name order), whose
// in-process operator watches every namespace; it would not see this
// test's instance anyway once stopped.
func TestInstallFromBundle(t *testing.T) {
	ctx := context.Background()
	cl := bundleClient(t)
	root := moduleRoot()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-olm"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	first := loadBundle(t, filepath.Join(root, "bundle"))
	if first.CSV.Name != bundle.CSVName(oldRelease.Version) {
		t.Fatalf("bundle/ is %s; the test upgrades from %s", first.CSV.Name, oldRelease.Version)
	}
	if !supports(first.CSV, operatorsv1alpha1.InstallModeTypeOwnNamespace) || !supports(first.CSV, operatorsv1alpha1.InstallModeTypeAllNamespaces) {
		t.Fatalf("install modes %+v", first.CSV.Spec.InstallModes)
	}

	// Teardown in OLM's order: the instance first, while its operator
	// still runs to uninstall it, then what the CSVs made.
	var k *operatorv1alpha1.Karmada
	installs := make([]*olmInstall, 0, 2)
	t.Cleanup(func() {
		if k != nil {
			forgetKarmada(t, cl, k)
		}
		for i := len(installs) - 1; i >= 0; i-- {
			uninstall(t, cl, installs[i])
		}
		if err := cl.Delete(context.Background(), ns); err != nil {
			t.Error(err)
		}
	})
	old := installCSV(t, cl, ns.Name, first, nil)
	installs = append(installs, old)
	waitOperatorRollout(t, cl, ns.Name, first.CSV)

	// The sample, as a user creates it from alm-examples.
	k = almExample(t, first.CSV)
	k.Namespace = ns.Name
	if err := cl.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	k = waitReady(t, client.ObjectKeyFromObject(k), oldRelease.Version)
	t.Logf("Karmada %s Ready at %s under the operator of %s", k.Name, k.Status.KarmadaVersion, first.CSV.Name)

	// Something of the user's in the control plane, and what the instance
	// keeps of its own, to find again after the upgrade.
	cp := adminClient(t, k)
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept-across-upgrade"}, Data: map[string]string{"from": oldRelease.Version}}
	if err := cp.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}
	before := instanceState(t, cl, k)

	// The next bundle of the graph, as `make bundle VERSION=v0.2.0
	// PREVIOUS=v0.1.0` makes it, loaded from disk like the first.
	nextDir := filepath.Join(t.TempDir(), "bundle")
	b, err := bundle.Build(bundle.Options{Root: root, Version: newRelease.Version, Previous: oldRelease.Version})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDir(nextDir); err != nil {
		t.Fatal(err)
	}
	next := loadBundle(t, nextDir)
	checkUpgradeEdge(t, first.CSV, next.CSV)

	// OLM's upgrade: the new CSV's RBAC, its Deployment (same name, so
	// updated in place) and the objects both CSVs have, adopted; then the
	// replaced CSV goes, and its RBAC with it.
	installs = append(installs, installCSV(t, cl, ns.Name, next, old))
	dep := waitOperatorRollout(t, cl, ns.Name, next.CSV)
	uninstall(t, cl, old)
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != newRelease.Image(release.Operator, "") {
		t.Errorf("the operator runs %s after the upgrade", img)
	}

	k = waitReady(t, client.ObjectKeyFromObject(k), newRelease.Version)
	for _, name := range []string{k.Name + "-controller-manager", k.Name + "-scheduler", k.Name + "-webhook"} {
		d := &appsv1.Deployment{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+newRelease.Version) {
			t.Errorf("%s runs %s after the upgrade", name, img)
		}
	}
	after := instanceState(t, cl, k)
	for what, v := range before {
		if after[what] != v {
			t.Errorf("%s changed across the upgrade: %s, then %s", what, v, after[what])
		}
	}
	cp = adminClient(t, k)
	got := &corev1.ConfigMap{}
	if err := cp.Get(ctx, client.ObjectKeyFromObject(kept), got); err != nil {
		t.Fatalf("the control plane lost the user's ConfigMap: %v", err)
	}
	if got.UID != kept.UID || got.Data["from"] != oldRelease.Version {
		t.Errorf("the user's ConfigMap changed: %+v", got)
	}

	// Deleting the instance under the CSV's permissions uninstalls it.
	uninstallKarmada(t, cl, k, next.CSV)
	k = nil
}

func bundleClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(fed.Host.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func loadBundle(t *testing.T, dir string) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatalf("loading the bundle in %s: %v", dir, err)
	}
	if b.CSV == nil {
		t.Fatalf("no CSV in %s", dir)
	}
	return b
}

// checkUpgradeEdge checks that OLM would offer next to a cluster running
// prev: it replaces it by name, and its skipRange covers it.
func checkUpgradeEdge(t *testing.T, prev, next *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	if next.Spec.Replaces != prev.Name {
		t.Errorf("%s replaces %q, want %s", next.Name, next.Spec.Replaces, prev.Name)
	}
	r, err := semver.ParseRange(next.Annotations[operatorsv1alpha1.SkipRangeAnnotationKey])
	if err != nil {
		t.Fatalf("%s: olm.skipRange: %v", next.Name, err)
	}
	if !r(prev.Spec.Version.Version) || r(next.Spec.Version.Version) {
		t.Errorf("%s: olm.skipRange %q does not cover %s alone", next.Name, next.Annotations[operatorsv1alpha1.SkipRangeAnnotationKey], prev.Spec.Version)
	}
	if !prev.Spec.Version.LT(next.Spec.Version.Version) {
		t.Errorf("%s is not newer than %s", next.Spec.Version, prev.Spec.Version)
	}
}

// installCSV creates, in namespace ns, what OLM creates for the bundle's
// CSV when an OperatorGroup targets ns alone: the CRDs (updated when they
// exist), per permissions entry a ServiceAccount, a Role and RoleBinding,
// per clusterPermissions entry a ClusterRole and ClusterRoleBinding, the
// other manifests of the bundle, and the Deployments of the install
// strategy with the OperatorGroup's annotations on their pods. prev, when
// set, is the install of the CSV this one replaces: a Deployment,
// ServiceAccount or manifest it made is taken over (a Deployment updated
// in place) rather than created.
func installCSV(t *testing.T, cl client.Client, ns string, b *manifests.Bundle, prev *olmInstall) *olmInstall {
	t.Helper()
	ctx := context.Background()
	csv := b.CSV
	in := &olmInstall{csv: csv}
	adopt := func(obj client.Object) client.Object {
		if prev == nil {
			return nil
		}
		for i, o := range prev.created {
			if o.GetObjectKind().GroupVersionKind().Kind == obj.GetObjectKind().GroupVersionKind().Kind && fmt.Sprintf("%T", o) == fmt.Sprintf("%T", obj) &&
				o.GetNamespace() == obj.GetNamespace() && o.GetName() == obj.GetName() {
				prev.created = append(prev.created[:i], prev.created[i+1:]...)
				in.created = append(in.created, o)
				return o
			}
		}
		return nil
	}
	create := func(obj client.Object) {
		t.Helper()
		if adopt(obj) != nil {
			return
		}
		if err := cl.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s for %s: %v", obj, obj.GetName(), csv.Name, err)
		}
		in.created = append(in.created, obj)
	}

	for _, crd := range b.V1CRDs {
		existing := &apiextensionsv1.CustomResourceDefinition{}
		err := cl.Get(ctx, client.ObjectKeyFromObject(crd), existing)
		switch {
		case apierrors.IsNotFound(err):
			if err := cl.Create(ctx, crd.DeepCopy()); err != nil {
				t.Fatal(err)
			}
		case err != nil:
			t.Fatal(err)
		default:
			existing.Spec = crd.Spec
			if err := cl.Update(ctx, existing); err != nil {
				t.Fatalf("updating CRD %s from %s: %v", crd.Name, csv.Name, err)
			}
		}
	}

	strategy := csv.Spec.InstallStrategy.StrategySpec
	accounts := map[string]bool{}
	account := func(name string) {
		if accounts[name] {
			return
		}
		accounts[name] = true
		create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	for i, p := range strategy.Permissions {
		account(p.ServiceAccountName)
		name := fmt.Sprintf("%s-%d", csv.Name, i)
		create(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: p.Rules})
		create(&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: p.ServiceAccountName}},
		})
	}
	for i, p := range strategy.ClusterPermissions {
		account(p.ServiceAccountName)
		name := fmt.Sprintf("%s-%s-%d", csv.Name, ns, i)
		create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: p.Rules})
		create(&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: p.ServiceAccountName}},
		})
	}

	for _, u := range b.Objects {
		switch u.GetKind() {
		case "ClusterServiceVersion", "CustomResourceDefinition":
			continue
		}
		obj := u.DeepCopy()
		obj.SetNamespace(ns)
		create(obj)
	}

	for _, spec := range strategy.DeploymentSpecs {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spec.Name, Labels: spec.Label},
			Spec:       *spec.Spec.DeepCopy(),
		}
		tmpl := &d.Spec.Template
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations["olm.operatorGroup"] = "flotilla"
		tmpl.Annotations["olm.operatorNamespace"] = ns
		tmpl.Annotations["olm.targetNamespaces"] = ns
		adaptToNodeAgent(t, &tmpl.Spec)
		if adopt(d) != nil {
			up := &appsv1.Deployment{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(d), up); err != nil {
				t.Fatal(err)
			}
			up.Labels, up.Spec = d.Labels, d.Spec
			if err := cl.Update(ctx, up); err != nil {
				t.Fatalf("replacing Deployment %s with %s's: %v", d.Name, csv.Name, err)
			}
			continue
		}
		create(d)
	}
	return in
}

// adaptToNodeAgent is the one change to the CSV's Deployment: the node
// agent runs every pod in this machine's network namespace, where the
// operator's listeners on all addresses (:8080, :8081) would collide with
// the next operator's during the rolling update, so they listen on the
// pod's IP as Flotilla's charts do. Everything else is as the CSV says.
func adaptToNodeAgent(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	c := &spec.Containers[0]
	changed := false
	for i, a := range c.Args {
		if name, addr, ok := strings.Cut(a, "="); ok && strings.HasSuffix(name, "-bind-address") && strings.HasPrefix(addr, ":") {
			c.Args[i] = name + "=$(POD_IP)" + addr
			changed = true
		}
	}
	if !changed {
		t.Fatalf("the operator's args %q have no listener on all addresses: drop adaptToNodeAgent", c.Args)
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}})
}

// waitOperatorRollout waits until the CSV's Deployment has rolled out: its
// generation observed, every replica updated and available, the old pods
// gone — what OLM waits for before it calls a CSV Succeeded.
func waitOperatorRollout(t *testing.T, cl client.Client, ns string, csv *operatorsv1alpha1.ClusterServiceVersion) *appsv1.Deployment {
	t.Helper()
	name := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name
	d := &appsv1.Deployment{}
	ok := false
	defer func() {
		if !ok {
			dumpOperatorLogs(t, cl, ns, d)
		}
	}()
	poll(t, 3*time.Minute, "Deployment "+name+" of "+csv.Name+" rolled out", func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return false, err
		}
		want := ptrDeref(d.Spec.Replicas)
		s := d.Status
		done := s.ObservedGeneration == d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
		return done, fmt.Errorf("status %+v", s)
	})
	ok = true
	return d
}

func ptrDeref(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// dumpOperatorLogs logs the operator pods' output, when a wait failed.
func dumpOperatorLogs(t *testing.T, cl client.Client, ns string, d *appsv1.Deployment) {
	pods := &corev1.PodList{}
	if err := cl.List(context.Background(), pods, client.InNamespace(ns)); err != nil {
		return
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, d.Name+"-") {
			continue
		}
		t.Logf("pod %s: phase %s, conditions %+v, containers %+v", p.Name, p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
		if logs, err := agent.Logs(ns, p.Name, "manager"); err == nil {
			lines := strings.Split(string(logs), "\n")
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			t.Logf("last lines of %s:\n%s", p.Name, strings.Join(lines, "\n"))
		}
	}
}

// almExample is the CSV's first example, the resource a user creates from
// the console's form.
func almExample(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) *operatorv1alpha1.Karmada {
	t.Helper()
	var examples []operatorv1alpha1.Karmada
	if err := yaml.UnmarshalStrict([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	if len(examples) == 0 {
		t.Fatal("alm-examples is empty")
	}
	return &examples[0]
}

// instanceState is what an upgrade must keep: the identity of the instance,
// of etcd's claims and of the certificates and kubeconfig the clients hold.
func instanceState(t *testing.T, cl client.Client, k *operatorv1alpha1.Karmada) map[string]string {
	t.Helper()
	ctx := context.Background()
	state := map[string]string{"Karmada UID": string(k.UID)}
	claims := &corev1.PersistentVolumeClaimList{}
	if err := cl.List(ctx, claims, client.InNamespace(k.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		state["claim "+c.Name] = string(c.UID) + " " + c.Spec.VolumeName
	}
	if len(claims.Items) == 0 {
		t.Error("etcd has no claim, though the sample asks for one")
	}
	sec := &corev1.Secret{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: k.Status.SecretRef.Namespace, Name: k.Status.SecretRef.Name}, sec); err != nil {
		t.Fatal(err)
	}
	state["admin kubeconfig"] = string(sec.Data["kubeconfig"])
	return state
}

// uninstallKarmada deletes the instance while its operator runs, and waits
// until the operator, with only the CSV's permissions, has uninstalled it
// and let it go.
func uninstallKarmada(t *testing.T, cl client.Client, k *operatorv1alpha1.Karmada, csv *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	ctx := context.Background()
	// The uninstall deletes the instance's Secrets with one deletecollection.
	if !grants(csv, "", "secrets", "deletecollection") {
		t.Errorf("%s does not grant deletecollection on Secrets, which the operator's uninstall calls", csv.Name)
	}
	if err := cl.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKeyFromObject(k), &operatorv1alpha1.Karmada{})), nil
	})
	if err != nil {
		t.Fatalf("Karmada %s was not uninstalled within 2m under %s's permissions", k.Name, csv.Name)
	}
}

// grants reports whether the CSV's clusterPermissions allow verb on
// resource of group.
func grants(csv *operatorsv1alpha1.ClusterServiceVersion, group, resource, verb string) bool {
	for _, p := range csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions {
		for _, r := range p.Rules {
			if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
				(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
				(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
				return true
			}
		}
	}
	return false
}

// forgetKarmada is the teardown of a test that failed before it
// uninstalled its instance: delete it, and drop its finalizer if the
// operator is not there to, so that the namespace can go.
func forgetKarmada(t *testing.T, cl client.Client, k *operatorv1alpha1.Karmada) {
	ctx := context.Background()
	if err := cl.Delete(ctx, k); err != nil {
		return
	}
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKeyFromObject(k), &operatorv1alpha1.Karmada{})), nil
	})
	cur := &operatorv1alpha1.Karmada{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(k), cur); err == nil {
		cur.Finalizers = nil
		if err := cl.Update(ctx, cur); err != nil {
			t.Logf("dropping the finalizers of Karmada %s: %v", k.Name, err)
		}
	}
}

// uninstall deletes what OLM made for a CSV: its Deployment (when it is the
// CSV that made it), RBAC, ServiceAccount and manifests.
func uninstall(t *testing.T, cl client.Client, in *olmInstall) {
	t.Helper()
	ctx := context.Background()
	for i := len(in.created) - 1; i >= 0; i-- {
		obj := in.created[i]
		if err := cl.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	}
	in.created = nil
}

func supports(csv *operatorsv1alpha1.ClusterServiceVersion, mode operatorsv1alpha1.InstallModeType) bool {
	for _, m := range csv.Spec.InstallModes {
		if m.Type == mode {
			return m.Supported
		}
	}
	return false
}
