package app_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/components/agent/app"
	"github.com/flotilla-io/flotilla/internal/controllertest"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/internal/names"
)

// One Pull member, its agent running with a short lease, and no
// controller-manager: what happens here is the agent's doing.
var fed = &localfedtest.Shared{Options: localfed.Options{
	PullMembers:  1,
	Nodes:        localfed.NodeOptions{Count: 1},
	StartTimeout: 5 * time.Minute,
	AgentArgs:    []string{"--cluster-lease-duration=4s", "--cluster-status-update-frequency=1s"},
}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

func controlPlane(t *testing.T) (*localfed.Federation, client.Client) {
	t.Helper()
	f := fed.Get(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme, workv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestRegistersReportsAndRenews(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	var kubeSystem corev1.Namespace
	if err := member.Client.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}

	controllertest.WaitFor(t, "Cluster registered in Pull mode, Ready, with its status", func(ctx context.Context) (bool, error) {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, &c); err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return c.Spec.SyncMode == clusterv1alpha1.Pull && c.Spec.ID == string(kubeSystem.UID) && c.Spec.APIEndpoint == member.Endpoint &&
			ready != nil && ready.Status == metav1.ConditionTrue && ready.Reason == clusterv1alpha1.ClusterReasonReady &&
			c.Status.KubernetesVersion != "" && c.Status.NodeSummary != nil && c.Status.NodeSummary.TotalNum == 1, nil
	})

	var first time.Time
	controllertest.WaitFor(t, "lease renewed", func(ctx context.Context) (bool, error) {
		var l coordinationv1.Lease
		err := cp.Get(ctx, client.ObjectKey{Namespace: clusterv1alpha1.NamespaceClusterLeases, Name: member.Name}, &l)
		if apierrors.IsNotFound(err) || (err == nil && l.Spec.RenewTime == nil) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != member.Name || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Cluster" {
			t.Fatalf("lease = %+v, want held by %s and owned by its Cluster", l, member.Name)
		}
		if first.IsZero() {
			first = l.Spec.RenewTime.Time
			return false, nil
		}
		return l.Spec.RenewTime.After(first), nil
	})
}

func configMapWork(t *testing.T, ns, name string, data map[string]string) *workv1alpha1.Work {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": name},
		"data":     data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
}

// TestAppliesReflectsAndRemovesWorks: a Work of the execution namespace
// reaches the member, reports Applied and the member object's status entry,
// follows a change of its manifest, and takes the object with it when
// deleted; all with the agent's own, per-cluster, rights.
func TestAppliesReflectsAndRemovesWorks(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	es := names.ExecutionSpace(member.Name)
	work := configMapWork(t, es, "agent-applies", map[string]string{"k": "v1"})
	if err := cp.Create(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "default", Name: work.Name}
	memberValue := func(ctx context.Context) (string, bool, error) {
		var cm corev1.ConfigMap
		err := member.Client.Get(ctx, key, &cm)
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return cm.Data["k"], cm.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue, nil
	}

	controllertest.WaitFor(t, "ConfigMap in the member, Work Applied with its status entry", func(ctx context.Context) (bool, error) {
		v, managed, err := memberValue(ctx)
		if err != nil || v != "v1" || !managed {
			return false, err
		}
		var w workv1alpha1.Work
		if err := cp.Get(ctx, client.ObjectKeyFromObject(work), &w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) && len(w.Status.ManifestStatuses) == 1, nil
	})

	updated := configMapWork(t, es, work.Name, map[string]string{"k": "v2"})
	if err := cp.Get(t.Context(), client.ObjectKeyFromObject(work), work); err != nil {
		t.Fatal(err)
	}
	work.Spec = updated.Spec
	if err := cp.Update(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "member ConfigMap updated", func(ctx context.Context) (bool, error) {
		v, _, err := memberValue(ctx)
		return v == "v2", err
	})

	if err := cp.Delete(t.Context(), work); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, "member ConfigMap and Work gone", func(ctx context.Context) (bool, error) {
		var cm corev1.ConfigMap
		if err := member.Client.Get(ctx, key, &cm); !apierrors.IsNotFound(err) {
			return false, client.IgnoreNotFound(err)
		}
		err := cp.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// TestReportsSecrets: with --report-secrets at its default the agent, with
// only its own rights in the control plane, reports both credentials as
// karmada-agent does: ServiceAccounts in the member, their tokens in the
// Secrets <cluster> and <cluster>-impersonator beside its Lease, owned by
// the Cluster, which refers to them; and the token reaches the member.
func TestReportsSecrets(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	var cluster clusterv1alpha1.Cluster
	controllertest.WaitFor(t, "Cluster with both secret references", func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, &cluster); err != nil {
			return false, err
		}
		return cluster.Spec.SecretRef != nil && cluster.Spec.ImpersonatorSecretRef != nil, nil
	})
	wantRefs := []clusterv1alpha1.LocalSecretReference{
		{Namespace: "karmada-cluster", Name: member.Name},
		{Namespace: "karmada-cluster", Name: member.Name + "-impersonator"},
	}
	if diff := cmp.Diff(wantRefs, []clusterv1alpha1.LocalSecretReference{*cluster.Spec.SecretRef, *cluster.Spec.ImpersonatorSecretRef}); diff != "" {
		t.Errorf("secret references (-want +got):\n%s", diff)
	}
	var secrets [2]corev1.Secret
	for i, ref := range wantRefs {
		if err := cp.Get(t.Context(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &secrets[i]); err != nil {
			t.Fatal(err)
		}
		s := secrets[i]
		if len(s.Data[clusterv1alpha1.SecretTokenKey]) == 0 || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != cluster.UID {
			t.Errorf("Secret %s: token %d bytes, owners %+v; want a token, owned by Cluster %s", ref.Name, len(s.Data[clusterv1alpha1.SecretTokenKey]),
				s.OwnerReferences, cluster.UID)
		}
	}
	ca := secrets[0].Data[clusterv1alpha1.SecretCADataKey]
	if len(ca) == 0 {
		t.Error("the credentials Secret has no caBundle")
	}
	for _, sa := range []string{"karmada-" + member.Name, "karmada-impersonator"} {
		if err := member.Client.Get(t.Context(), client.ObjectKey{Namespace: "karmada-cluster", Name: sa}, &corev1.ServiceAccount{}); err != nil {
			t.Errorf("ServiceAccount karmada-cluster/%s in the member: %v", sa, err)
		}
	}
	// What a Push-style client of the member would do with the Secret.
	cfg := &rest.Config{Host: member.Endpoint, BearerToken: string(secrets[0].Data[clusterv1alpha1.SecretTokenKey]),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceSystem}, &corev1.Namespace{}); err != nil {
		t.Errorf("reading the member with the reported credentials: %v", err)
	}
}

// TestThresholdsProxyAndNoSecrets runs a second agent in this process for
// another Cluster name, reaching the member through a TCP proxy that the
// test stops and starts: Ready holds through a failure shorter than
// --cluster-failure-threshold and flips after it, and likewise back with
// --cluster-success-threshold; --report-secrets=None reports no
// credentials; --proxy-server-address is the Cluster's spec.proxyURL;
// --enable-cluster-resource-modeling=false leaves the modelings out where
// the other agent (on by default) grades the same nodes.
func TestThresholdsProxyAndNoSecrets(t *testing.T) {
	f, cp := controlPlane(t)
	member := f.Members[0]
	const name, success, failure = "flaky", 4 * time.Second, 10 * time.Second
	proxy := controllertest.StartTCPProxy(t, strings.TrimPrefix(member.Endpoint, "https://"))
	through := rest.CopyConfig(member.Config)
	through.Host = "https://" + proxy.Addr

	opts, err := app.ParseOptions("--cluster-name="+name, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false",
		"--cluster-status-update-frequency=1s", "--cluster-lease-duration=4s",
		"--cluster-success-threshold="+success.String(), "--cluster-failure-threshold="+failure.String(),
		"--report-secrets=None", "--proxy-server-address=http://127.0.0.1:3128", "--enable-cluster-resource-modeling=false")
	if err != nil {
		t.Fatal(err)
	}
	opts.Restartable = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.RunWithConfigs(ctx, f.ControlPlane.Config, through, opts, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent of %s: %v", name, err)
		}
		if err := cp.Delete(context.Background(), &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting Cluster %s: %v", name, err)
		}
	})

	ready := func(ctx context.Context) (metav1.ConditionStatus, *clusterv1alpha1.Cluster, error) {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
			return "", nil, client.IgnoreNotFound(err)
		}
		if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			return cond.Status, &c, nil
		}
		return "", &c, nil
	}
	readyIs := func(want metav1.ConditionStatus) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			got, _, err := ready(ctx)
			return got == want, err
		}
	}
	// holds checks, until d after from, that Ready is still want: the
	// threshold cannot have passed before then, whenever the agent first
	// saw the change.
	holds := func(want metav1.ConditionStatus, from time.Time, threshold time.Duration) {
		t.Helper()
		for time.Since(from) < threshold-time.Second {
			got, _, err := ready(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("Ready %s %s after the change, want %s until the %s threshold", got, time.Since(from).Round(time.Millisecond), want, threshold)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	controllertest.WaitFor(t, "Cluster "+name+" Ready", readyIs(metav1.ConditionTrue))
	_, c, err := ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.ProxyURL != "http://127.0.0.1:3128" || c.Spec.SecretRef != nil || c.Spec.ImpersonatorSecretRef != nil {
		t.Errorf("spec proxyURL %q, secretRef %v, impersonatorSecretRef %v; want the proxy and no secrets", c.Spec.ProxyURL, c.Spec.SecretRef, c.Spec.ImpersonatorSecretRef)
	}
	for _, s := range []string{name, name + "-impersonator"} {
		if err := cp.Get(t.Context(), client.ObjectKey{Namespace: "karmada-cluster", Name: s}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret karmada-cluster/%s: %v, want none", s, err)
		}
	}

	stopped := time.Now()
	proxy.Stop()
	holds(metav1.ConditionTrue, stopped, failure)
	controllertest.WaitFor(t, "Cluster "+name+" not Ready after the failure threshold", readyIs(metav1.ConditionFalse))

	restarted := time.Now()
	proxy.Restart(t)
	holds(metav1.ConditionFalse, restarted, success)
	controllertest.WaitFor(t, "Cluster "+name+" Ready after the success threshold", readyIs(metav1.ConditionTrue))

	// Resource models on both Clusters: the default agent grades the
	// member's node, this one does not.
	models := []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("1k")}}},
	}
	for _, n := range []string{name, member.Name} {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(t.Context(), client.ObjectKey{Name: n}, &c); err != nil {
			t.Fatal(err)
		}
		c.Spec.ResourceModels = models
		if err := cp.Update(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.WaitFor(t, "the default agent's Cluster graded by its resource models", func(ctx context.Context) (bool, error) {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(ctx, client.ObjectKey{Name: member.Name}, &c); err != nil {
			return false, err
		}
		s := c.Status.ResourceSummary
		return s != nil && len(s.AllocatableModelings) == 1 && s.AllocatableModelings[0].Count == 1, nil
	})
	// Ready carries the generation the agent collected for; the summary
	// goes in the same write.
	var got clusterv1alpha1.Cluster
	controllertest.WaitFor(t, name+" reported for its resource models", func(ctx context.Context) (bool, error) {
		if err := cp.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return cond != nil && cond.ObservedGeneration == got.Generation, nil
	})
	if got.Status.ResourceSummary == nil || len(got.Status.ResourceSummary.AllocatableModelings) != 0 {
		t.Errorf("resource summary of %s = %+v, want one without allocatableModelings", name, got.Status.ResourceSummary)
	}
}
