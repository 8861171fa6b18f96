package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/join"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// TestJoinAndUnjoin runs unjoin and join against a local federation's
// member1: unjoin removes the Cluster, its Secrets and what the member held
// for the control plane; join registers it again with long-lived tokens
// that reach the member; the same member under a second name is refused.
func TestJoinAndUnjoin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	ctx := t.Context()
	fed, err := localfed.Start(ctx, localfed.Options{Members: 1, WorkDir: t.TempDir(), StartTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fed.Close() })
	cp, m := fed.ControlPlane.Client, fed.Members[0]
	run := func(args ...string) (string, error) {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(args, "--kubeconfig", fed.KubeconfigPath, "--context", localfed.ControlPlaneName, "--cluster-kubeconfig", fed.KubeconfigPath))
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	eventually := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, cond); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	gone := func(c client.Client, obj client.Object) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}
	}

	out, err := run("unjoin", "member1")
	if err != nil || out != "cluster(member1) is unjoined successfully\n" {
		t.Fatalf("unjoin: %q, %v", out, err)
	}
	eventually("the Cluster's Secrets collected", gone(cp, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: join.DefaultClusterNamespace, Name: "member1"}}))
	if err := m.Client.Get(ctx, client.ObjectKey{Namespace: join.DefaultClusterNamespace, Name: "karmada-member1"}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the member's ServiceAccount karmada-member1 after unjoin: %v", err)
	}

	out, err = run("join", "member1", "--dry-run")
	if err != nil || !strings.Contains(out, "would be joined") {
		t.Fatalf("join --dry-run: %q, %v", out, err)
	}
	if err := cp.Get(ctx, client.ObjectKey{Name: "member1"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry run registered the cluster: %v", err)
	}

	out, err = run("join", "member1", "--cluster-region", "eu-west-1", "--cluster-zones", "a,b")
	if err != nil || out != "cluster(member1) is joined successfully\n" {
		t.Fatalf("join: %q, %v", out, err)
	}
	var cluster clusterv1alpha1.Cluster
	if err := cp.Get(ctx, client.ObjectKey{Name: "member1"}, &cluster); err != nil {
		t.Fatal(err)
	}
	var kubeSystem corev1.Namespace
	if err := m.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}
	spec := cluster.Spec
	if spec.ID != string(kubeSystem.UID) || spec.SyncMode != clusterv1alpha1.Push || spec.APIEndpoint != m.Endpoint ||
		spec.Region != "eu-west-1" || strings.Join(spec.Zones, ",") != "a,b" ||
		spec.SecretRef == nil || spec.ImpersonatorSecretRef == nil || spec.ImpersonatorSecretRef.Name != "member1-impersonator" {
		t.Fatalf("Cluster spec %+v", spec)
	}
	var secret corev1.Secret
	if err := cp.Get(ctx, client.ObjectKey{Namespace: spec.SecretRef.Namespace, Name: spec.SecretRef.Name}, &secret); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(&secret); owner == nil || owner.UID != cluster.UID {
		t.Errorf("Secret %s is owned by %v, want the Cluster", secret.Name, secret.OwnerReferences)
	}
	// The token is the member's long-lived one, and reaches it.
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: spec.APIEndpoint, BearerToken: string(secret.Data[clusterv1alpha1.SecretTokenKey]),
		TLSClientConfig: rest.TLSClientConfig{CAData: secret.Data[clusterv1alpha1.SecretCADataKey]}})
	if err != nil {
		t.Fatal(err)
	}
	eventually("the joined token listing the member's namespaces", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})

	if _, err := run("join", "member-again", "--cluster-context", "member1"); err == nil || !strings.Contains(err.Error(), "registered with name member1") {
		t.Fatalf("joining member1 again under another name: %v", err)
	}
}
