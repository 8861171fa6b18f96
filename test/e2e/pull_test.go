package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	agentapp "github.com/flotilla-io/flotilla/components/agent/app"
	cmapp "github.com/flotilla-io/flotilla/components/controller-manager/app"
	schedapp "github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/agentaccess"
	"github.com/flotilla-io/flotilla/internal/bootstrap"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

// TestMixedFederation runs a federation of its own, one Push and one Pull
// member, with a controller-manager whose lease grace is short: a
// Deployment reaches both members and its status comes back from both; the
// Pull member's agent stopping makes the member Unknown and tainted
// unreachable through its lease, and starting it again makes it Ready.
func TestMixedFederation(t *testing.T) {
	f := localfedtest.Start(t, localfed.Options{
		Members: 2, PullMembers: 1, Nodes: localfed.NodeOptions{Count: 1}, StartTimeout: 5 * time.Minute,
		AgentArgs: []string{"--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s"},
	})
	push, pull := f.Members[0].Name, f.Members[2].Name
	c := mixedClient(t, f)
	runComponents(t, f, "--cluster-monitor-grace-period=4s", "--cluster-health-probe-period=1s", "--cluster-status-update-frequency=1s")
	for _, m := range []string{push, pull} {
		clusterHealthIs(t, c, m, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
	}

	ns := "default"
	d := deployment(ns, "mixed", 2, "nginx")
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	pp := propagationPolicy(ns, "mixed", []string{push, pull}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name})
	if err := c.Create(t.Context(), pp); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{push, pull} {
		member := f.Member(m)
		pollFor(t, "Deployment available in "+m, func(ctx context.Context) (bool, error) {
			var got appsv1.Deployment
			if err := member.Client.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return got.Status.AvailableReplicas == 2, nil
		})
	}
	pollFor(t, "template status aggregated from both members", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 4, nil
	})

	if err := f.StopAgent(t.Context(), pull); err != nil {
		t.Fatal(err)
	}
	clusterHealthIs(t, c, pull, metav1.ConditionUnknown, clusterv1alpha1.ClusterReasonStatusUnknown,
		[]string{clusterv1alpha1.TaintClusterUnreachable + ":NoSchedule"})
	if err := f.StartAgent(t.Context(), pull); err != nil {
		t.Fatal(err)
	}
	clusterHealthIs(t, c, pull, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)
	clusterHealthIs(t, c, push, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)

	t.Run("registration by token", func(t *testing.T) { registerByToken(t, f, c, push) })
}

// registerByToken takes the federation's second Push member out and brings
// it back in Pull mode the way an operator would: a bootstrap token from
// the control plane, register with the CA pinned by its hash (the
// controller-manager approves the agent's CSR and grants its rights), the
// agent run from the kubeconfig register installed; then unregister, which
// takes the member's workloads with it (the scheduler moves them to the Push
// member, off the Cluster being deleted).
func registerByToken(t *testing.T, f *localfed.Federation, c client.Client, push string) {
	ctx := t.Context()
	m := f.Members[1]
	if err := c.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m.Name}}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "Push Cluster "+m.Name+" gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: m.Name}, &clusterv1alpha1.Cluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	token, err := bootstrap.CreateToken(ctx, c, time.Hour, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	if err := bootstrap.EnsureClusterInfo(ctx, c, f.ControlPlane.Endpoint, f.ControlPlane.CAData); err != nil {
		t.Fatal(err)
	}
	hash, err := bootstrap.CAHash(f.ControlPlane.CAData)
	if err != nil {
		t.Fatal(err)
	}
	// The shortest validity the API server grants, so that the agent
	// rotates it again and again while it works.
	opts := bootstrap.RegisterOptions{Endpoint: f.ControlPlane.Endpoint, Token: token, ClusterName: m.Name, Member: m.Client, AgentImage: "agent:e2e",
		CertExpiration: 10 * time.Minute}
	opts.CAHashes = []string{"sha256:" + strings.Repeat("0", 64)}
	if _, err := bootstrap.Register(ctx, opts); err == nil || !strings.Contains(err.Error(), "refusing to trust") {
		t.Fatalf("register with the wrong CA pin: %v, want a refusal", err)
	}
	opts.CAHashes = []string{hash}
	if _, err := bootstrap.Register(ctx, opts); err != nil {
		t.Fatal(err)
	}

	// The member's kube-controller-manager would run the Deployment's pod;
	// there is no container runtime here, so the agent runs in this process
	// from the kubeconfig register put into the member.
	var secret corev1.Secret
	if err := m.Client.Get(ctx, client.ObjectKey{Namespace: bootstrap.AgentNamespace, Name: bootstrap.AgentKubeconfigSecret}, &secret); err != nil {
		t.Fatal(err)
	}
	agentCfg, err := bootstrap.ConfigFromKubeconfig(secret.Data[bootstrap.AgentKubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	registeredCert := agentCertificate(t, secret.Data[bootstrap.AgentKubeconfigKey])
	agentOpts, err := agentapp.ParseOptions("--cluster-name="+m.Name, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-lease-duration=2s", "--cluster-status-update-frequency=1s",
		"--controllers=*,certRotation", "--cert-rotation-checking-interval=2s", "--cert-rotation-remaining-time-threshold=0.9")
	if err != nil {
		t.Fatal(err)
	}
	agentOpts.Restartable = true
	agentCtx, stopAgent := context.WithCancel(context.Background())
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- agentapp.RunWithConfigs(agentCtx, agentCfg, m.Config, agentOpts, log.FromContext(ctx).WithName("registered-agent"))
	}()
	t.Cleanup(func() {
		stopAgent()
		if err := <-agentDone; err != nil {
			t.Errorf("registered agent: %v", err)
		}
	})
	clusterHealthIs(t, c, m.Name, metav1.ConditionTrue, clusterv1alpha1.ClusterReasonReady, nil)

	d := deployment("default", "registered", 1, "nginx")
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	pp := propagationPolicy("default", "registered", []string{push, m.Name}, policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name})
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "Deployment available in the registered member", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return got.Status.AvailableReplicas == 1, nil
	})

	// Two rotations, each written back to the member's Secret, and the
	// agent still applies what changes afterwards.
	seen := map[string]bool{registeredCert: true}
	pollFor(t, "the agent's certificate rotated twice", func(ctx context.Context) (bool, error) {
		var s corev1.Secret
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(&secret), &s); err != nil {
			return false, err
		}
		seen[agentCertificate(t, s.Data[bootstrap.AgentKubeconfigKey])] = true
		return len(seen) >= 3, nil
	})
	var tpl appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), &tpl); err != nil {
		t.Fatal(err)
	}
	tpl.Spec.Replicas = ptr.To[int32](2)
	if err := c.Update(ctx, &tpl); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "scaled Deployment available in the registered member after rotation", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 2, nil
	})

	if err := bootstrap.Unregister(ctx, c, m.Client, m.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "Deployment removed from the unregistered member", func(ctx context.Context) (bool, error) {
		err := m.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	for _, obj := range []client.Object{
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: agentaccess.User(m.Name)}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after unregister: %v, want it gone", obj, obj.GetName(), err)
		}
	}
	if err := m.Client.Get(ctx, client.ObjectKey{Namespace: bootstrap.AgentNamespace, Name: bootstrap.AgentName}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("agent Deployment in the member after unregister: %v, want it gone", err)
	}
}

// mixedClient is a client of f's control plane that knows Flotilla's types.
func mixedClient(t *testing.T, f *localfed.Federation) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme, workv1alpha1.AddToScheme, workv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runComponents runs a controller-manager (with cmArgs) and a scheduler
// against f until the test ends.
func runComponents(t *testing.T, f *localfed.Federation, cmArgs ...string) {
	t.Helper()
	cm, err := cmapp.ParseOptions(append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}, cmArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	// The suite's own controller-manager runs in this process too.
	cm.Restartable = true
	sched, err := schedapp.ParseOptions("--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		t.Fatal(err)
	}
	logger := log.FromContext(t.Context())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- cmapp.Run(ctx, f.ControlPlane.Config, cm, logger.WithName("mixed-controller-manager")) }()
	go func() { done <- schedapp.Run(ctx, f.ControlPlane.Config, sched, logger.WithName("mixed-scheduler")) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("component of the mixed federation: %v", err)
			}
		}
	})
}

// clusterHealthIs waits until the Cluster's Ready condition and health
// taints are as given.
func clusterHealthIs(t *testing.T, c client.Client, name string, status metav1.ConditionStatus, reason string, taints []string) {
	t.Helper()
	pollFor(t, "Cluster "+name+" "+string(status)+"/"+reason, func(ctx context.Context) (bool, error) {
		var got clusterv1alpha1.Cluster
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return cond != nil && cond.Status == status && cond.Reason == reason && slices.Equal(healthTaints(&got), taints), nil
	})
}

// pollFor waits for cond, failing the test after two minutes.
func pollFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// agentCertificate is the client certificate (PEM) of an agent kubeconfig.
func agentCertificate(t *testing.T, kubeconfig []byte) string {
	t.Helper()
	cfg, err := bootstrap.ConfigFromKubeconfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.CertData) == 0 {
		t.Fatal("agent kubeconfig without a client certificate")
	}
	return string(cfg.CertData)
}
