package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// TestGet reads objects of the control plane and of two members through
// the cluster proxy, as an administrator and as a user the members let read
// one namespace only.
func TestGet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	ctx := t.Context()
	fed, err := localfed.Start(ctx, localfed.Options{Members: 2, APIServerOnlyMembers: true, AggregatedAPIServer: true,
		WorkDir: t.TempDir(), StartTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fed.Close() })
	create := func(c client.Client, objs ...client.Object) {
		t.Helper()
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
		}
	}
	configMap := func(ns, name string, managed bool) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
		if managed {
			cm.Labels = map[string]string{workv1alpha1.ManagedByKarmadaLabel: workv1alpha1.ManagedByKarmadaLabelValue}
		}
		return cm
	}
	for _, c := range []*localfed.Cluster{fed.ControlPlane, fed.Members[0], fed.Members[1]} {
		create(c.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}})
	}
	create(fed.ControlPlane.Client, configMap("team-a", "web", false))
	create(fed.Members[0].Client, configMap("team-a", "web", true), configMap("team-a", "local", false), configMap("team-b", "secret-plans", false))
	create(fed.Members[1].Client, configMap("team-a", "web", true))

	run := func(kubeconfig string, args ...string) (string, string, error) {
		cmd := newRootCommand()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"get", "--kubeconfig", kubeconfig}, args...))
		err := cmd.ExecuteContext(ctx)
		return out.String(), errOut.String(), err
	}
	admin := fed.KubeconfigPath
	adminArgs := []string{"--context", localfed.ControlPlaneName}

	// The controller-manager's unified-auth controller lets the members'
	// impersonators impersonate whoever may proxy to them: the admin
	// (cluster-proxy-admin) from the start, the reader below once allowed.
	runComponents(t, fed)
	waitUntil(t, "the admin can proxy to both members", 2*time.Minute, func() error {
		_, errOut, err := run(admin, append([]string{"configmaps", "-n", "kube-system", "--operation-scope", "members"}, adminArgs...)...)
		if err != nil {
			return fmt.Errorf("%w: %s", err, errOut)
		}
		return nil
	})

	for _, tc := range []struct {
		name string
		args []string
		want [][]string
	}{{
		name: "control plane by default",
		args: []string{"configmaps", "-n", "team-a", "web"},
		want: [][]string{{"NAME", "DATA", "AGE"}, {"web", "1", "<age>"}},
	}, {
		name: "members",
		args: []string{"configmaps", "-n", "team-a", "--operation-scope", "members"},
		want: [][]string{
			{"NAME", "CLUSTER", "DATA", "AGE", "ADOPTION"},
			{"local", "member1", "1", "<age>", "N"},
			{"web", "member1", "1", "<age>", "Y"},
			{"web", "member2", "1", "<age>", "Y"},
		},
	}, {
		name: "all, one member",
		args: []string{"configmaps", "-n", "team-a", "web", "--operation-scope", "all", "--clusters", "member2"},
		want: [][]string{
			{"NAME", "CLUSTER", "DATA", "AGE", "ADOPTION"},
			{"web", "Karmada", "1", "<age>", "-"},
			{"web", "member2", "1", "<age>", "Y"},
		},
	}, {
		name: "all namespaces",
		args: []string{"configmaps", "-A", "--operation-scope", "members", "-C", "member1", "-l", "!" + workv1alpha1.ManagedByKarmadaLabel,
			"--field-selector", "metadata.name!=kube-root-ca.crt,metadata.namespace!=kube-system"},
		want: [][]string{
			{"NAMESPACE", "NAME", "CLUSTER", "DATA", "AGE", "ADOPTION"},
			{"team-a", "local", "member1", "1", "<age>", "N"},
			{"team-b", "secret-plans", "member1", "1", "<age>", "N"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(admin, append(tc.args, adminArgs...)...)
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out, errOut)
			}
			if diff := cmp.Diff(tc.want, tableFields(out)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("structured output", func(t *testing.T) {
		out, errOut, err := run(admin, append([]string{"configmaps", "-n", "team-a", "web", "--operation-scope", "members", "-o", "json"}, adminArgs...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var list struct {
			Kind  string `json:"kind"`
			Items []corev1.ConfigMap
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if list.Kind != "List" || len(list.Items) != 2 || list.Items[0].Name != "web" {
			t.Errorf("got %s with %d items, want a List of the 2 members' web", list.Kind, len(list.Items))
		}
		out, _, err = run(admin, append([]string{"configmaps", "-n", "team-a", "local", "--operation-scope", "members", "-C", "member1", "-o", "name"}, adminArgs...)...)
		if err != nil || out != "configmap/local\n" {
			t.Errorf("-o name: %q, %v", out, err)
		}
	})

	t.Run("describe", func(t *testing.T) {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"describe", "--kubeconfig", admin, "configmap", "web", "-n", "team-a", "--operation-scope", "all"}, adminArgs...))
		if err := cmd.ExecuteContext(ctx); err != nil {
			t.Fatal(err)
		}
		var clusters []string
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "Cluster:" {
				clusters = append(clusters, f[1])
			} else if len(f) == 2 && f[0] == "Name:" && f[1] != "web" {
				t.Errorf("described %s", f[1])
			}
		}
		if diff := cmp.Diff([]string{"Karmada", "member1", "member2"}, clusters); diff != "" {
			t.Errorf("clusters described (-want +got):\n%s\n%s", diff, out.String())
		}
	})

	t.Run("promote", func(t *testing.T) {
		promote := func(args ...string) (string, error) {
			cmd := newRootCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(append(append([]string{"promote", "--kubeconfig", admin}, args...), adminArgs...))
			err := cmd.ExecuteContext(ctx)
			return out.String(), err
		}
		if _, err := promote("configmap", "local", "-n", "team-a"); err == nil || !strings.Contains(err.Error(), "--cluster") {
			t.Errorf("without --cluster: %v", err)
		}
		out, err := promote("configmap", "local", "-n", "team-a", "-C", "member1", "--dry-run")
		if err != nil || !strings.Contains(out, "work.karmada.io/conflict-resolution: overwrite") || !strings.Contains(out, "kind: PropagationPolicy") {
			t.Errorf("--dry-run: %v\n%s", err, out)
		}
		if err := fed.ControlPlane.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "local"}, &corev1.ConfigMap{}); err == nil {
			t.Error("--dry-run created the template")
		}
		out, err = promote("configmap", "local", "-n", "team-a", "-C", "member1", "--policy-name", "local-cm")
		if err != nil || !strings.Contains(out, "ConfigMap team-a/local promoted from cluster member1 (PropagationPolicy local-cm)") {
			t.Fatalf("promote: %v\n%s", err, out)
		}
		pp := &unstructured.Unstructured{}
		pp.SetGroupVersionKind(policyv1alpha1.GroupVersion.WithKind("PropagationPolicy"))
		if err := fed.ControlPlane.Client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "local-cm"}, pp); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedStringSlice(pp.Object, "spec", "placement", "clusterAffinity", "clusterNames"); len(got) != 1 || got[0] != "member1" {
			t.Errorf("policy placement %v", got)
		}
		if _, err := promote("configmap", "local", "-n", "team-a", "-C", "member1"); err == nil || !strings.Contains(err.Error(), "already in the control plane") {
			t.Errorf("promoting twice: %v", err)
		}
	})

	t.Run("apply", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "app.yaml")
		if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied, namespace: team-b}\ndata: {k: v}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		apply := func(args ...string) (string, error) {
			cmd := newRootCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(append(append([]string{"apply", "--kubeconfig", admin, "-f", manifest}, args...), adminArgs...))
			err := cmd.ExecuteContext(ctx)
			return out.String(), err
		}
		if _, err := apply("--clusters", "member7"); err == nil || !strings.Contains(err.Error(), `--clusters: cluster "member7"`) {
			t.Errorf("unknown member: %v", err)
		}
		if err := fed.ControlPlane.Client.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: "applied"}, &corev1.ConfigMap{}); err == nil {
			t.Error("applied despite a bad --clusters")
		}
		out, err := apply("--all-clusters")
		if err != nil || !strings.Contains(out, "configmap/applied created") || !strings.Contains(out, "PropagationPolicy applied-") {
			t.Fatalf("apply --all-clusters: %v\n%s", err, out)
		}
		placement := func() []string {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(policyv1alpha1.GroupVersion.WithKind("PropagationPolicyList"))
			if err := fed.ControlPlane.Client.List(ctx, &list, client.InNamespace("team-b")); err != nil || len(list.Items) != 1 {
				t.Fatalf("policies: %v, %d", err, len(list.Items))
			}
			got, _, _ := unstructured.NestedStringSlice(list.Items[0].Object, "spec", "placement", "clusterAffinity", "clusterNames")
			return got
		}
		if diff := cmp.Diff([]string{"member1", "member2"}, placement()); diff != "" {
			t.Errorf("placement (-want +got):\n%s", diff)
		}
		if out, err := apply("--clusters", "member2"); err != nil || !strings.Contains(out, "configured") {
			t.Fatalf("apply --clusters member2: %v\n%s", err, out)
		}
		if diff := cmp.Diff([]string{"member2"}, placement()); diff != "" {
			t.Errorf("placement after --clusters (-want +got):\n%s", diff)
		}
	})

	t.Run("kubectl commands against the control plane", func(t *testing.T) {
		kubectl := func(args ...string) string {
			t.Helper()
			cmd := newRootCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(append(append(args, "--kubeconfig", admin), adminArgs...))
			if err := cmd.ExecuteContext(ctx); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out.String())
			}
			return out.String()
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"create", "configmap", "made", "-n", "team-a", "--from-literal", "k=v"}, "configmap/made created"},
			{[]string{"label", "configmap", "made", "-n", "team-a", "tier=front"}, "configmap/made labeled"},
			{[]string{"annotate", "configmap", "made", "-n", "team-a", "note=x"}, "configmap/made annotated"},
			{[]string{"patch", "configmap", "made", "-n", "team-a", "-p", `{"data":{"k":"w"}}`}, "configmap/made patched"},
			{[]string{"delete", "configmap", "made", "-n", "team-a"}, `configmap "made" deleted`},
			// Clusters come from the aggregated API server, with its
			// OpenAPI.
			{[]string{"api-resources", "--api-group", "cluster.karmada.io", "--no-headers"}, "clusters"},
			{[]string{"explain", "clusters.spec.syncMode"}, "FIELD: syncMode"},
		} {
			if out := kubectl(tc.args...); !strings.Contains(out, tc.want) {
				t.Errorf("%v: %q, want %q", tc.args, out, tc.want)
			}
		}
	})

	t.Run("bad input names the flag", func(t *testing.T) {
		for args, want := range map[string]string{
			"configmaps --operation-scope everywhere":   "--operation-scope",
			"configmaps --clusters member1":             "--clusters: only with --operation-scope members or all",
			"configmaps --operation-scope members -C x": `--clusters: cluster "x" is not a member`,
		} {
			_, _, err := run(admin, append(strings.Fields(args), adminArgs...)...)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("get %s: %v, want an error with %q", args, err, want)
			}
		}
	})

	t.Run("a user sees what the members let them see", func(t *testing.T) {
		cp := fed.ControlPlane.Client
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reader"}}
		create(cp, sa,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{
				{Verbs: []string{"get", "list"}, APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters", "clusters/proxy"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}})
		for _, m := range fed.Members {
			create(m.Client,
				&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reader"}, Rules: []rbacv1.PolicyRule{
					{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}},
				&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reader"},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccount:default:reader"}}})
		}
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
		if err := cp.SubResource("token").Create(ctx, sa, req); err != nil {
			t.Fatal(err)
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["cp"] = &clientcmdapi.Cluster{Server: fed.ControlPlane.Endpoint, CertificateAuthorityData: fed.ControlPlane.CAData}
		cfg.AuthInfos["reader"] = &clientcmdapi.AuthInfo{Token: req.Status.Token}
		cfg.Contexts["reader"] = &clientcmdapi.Context{Cluster: "cp", AuthInfo: "reader", Namespace: "team-a"}
		cfg.CurrentContext = "reader"
		kubeconfig := filepath.Join(t.TempDir(), "reader.kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
			t.Fatal(err)
		}
		// RBAC reaches the control plane's cache in a moment, and the
		// members' through the unified-auth controller's Works in seconds.
		var out string
		waitUntil(t, "the reader can read team-a", time.Minute, func() error {
			var errOut string
			var err error
			out, errOut, err = run(kubeconfig, "configmaps", "--operation-scope", "members", "-l", workv1alpha1.ManagedByKarmadaLabel,
				"--field-selector", "metadata.name=web")
			if err != nil {
				return fmt.Errorf("%w: %s", err, errOut)
			}
			return nil
		})
		want := [][]string{{"NAME", "CLUSTER", "DATA", "AGE", "ADOPTION"}, {"web", "member1", "1", "<age>", "Y"}, {"web", "member2", "1", "<age>", "Y"}}
		if diff := cmp.Diff(want, tableFields(out)); diff != "" {
			t.Errorf("team-a (-want +got):\n%s", diff)
		}
		for _, args := range [][]string{{"configmaps", "-n", "team-b"}, {"configmaps", "-A"}} {
			out, _, err := run(kubeconfig, append(args, "--operation-scope", "members", "-C", "member1")...)
			if err == nil || !strings.Contains(err.Error(), "cluster member1") || !strings.Contains(err.Error(), "forbidden") {
				t.Errorf("get %v: %v, want member1's refusal", args, err)
			}
			if strings.Contains(out, "secret-plans") {
				t.Errorf("get %v showed another namespace:\n%s", args, out)
			}
		}

		// Narrowing: the member's impersonator may impersonate the reader,
		// whom the control plane lets proxy, and no one else, whatever the
		// member itself would let them do.
		for _, m := range fed.Members {
			secret := &corev1.Secret{}
			if err := cp.Get(ctx, client.ObjectKey{Namespace: join.DefaultClusterNamespace, Name: join.ImpersonatorSecretName(m.Name)}, secret); err != nil {
				t.Fatal(err)
			}
			as := func(user string, groups ...string) error {
				cfg := &rest.Config{Host: m.Endpoint, BearerToken: string(secret.Data[clusterv1alpha1.SecretTokenKey]),
					TLSClientConfig: rest.TLSClientConfig{CAData: m.CAData},
					Impersonate:     rest.ImpersonationConfig{UserName: user, Groups: groups}}
				// A clientset, not a client needing discovery first, so that
				// the member's refusal comes back as it is.
				kube, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return err
				}
				_, err = kube.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
				return err
			}
			if err := as("system:serviceaccount:default:reader", "system:serviceaccounts", "system:serviceaccounts:default"); err != nil {
				t.Errorf("%s: impersonating the reader: %v", m.Name, err)
			}
			if err := as("system:serviceaccount:default:default", "system:serviceaccounts", "system:serviceaccounts:default"); !apierrors.IsForbidden(err) ||
				!strings.Contains(err.Error(), "impersonate") {
				t.Errorf("%s: impersonating a service account without clusters/proxy: %v, want a refusal to impersonate", m.Name, err)
			}
			if err := as("team-a-admin"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "impersonate") {
				t.Errorf("%s: impersonating a user without clusters/proxy: %v, want a refusal to impersonate", m.Name, err)
			}
		}
	})
}

// waitUntil polls try until it succeeds, failing the test after timeout
// with its last error.
func waitUntil(t *testing.T, what string, timeout time.Duration, try func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting until %s: %v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// ageCell is what the AGE column holds: 5s, 3m2s, 1h, ...
var ageCell = regexp.MustCompile(`^(\d+[smhdy])+$`)

// tableFields splits printed table lines into fields, ages replaced.
func tableFields(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			if ageCell.MatchString(f) {
				fields[i] = "<age>"
			}
		}
		rows = append(rows, fields)
	}
	return rows
}
