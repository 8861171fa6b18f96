package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/localfed"
)

// TestLogsExecAttach reads the logs of a propagated Deployment's pod in
// member1, runs commands in it and attaches to it, all through the control
// plane's cluster proxy, on one federation.
func TestLogsExecAttach(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	ctx := t.Context()
	fed, cp, pod := propagatedPod(t)
	member := fed.Member("member1")
	const ns = "shop"

	admin := []string{"--kubeconfig", fed.KubeconfigPath, "--context", localfed.ControlPlaneName}
	// run runs a command with the connection flags first: after --, exec's
	// arguments are the container's.
	run := func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, connection []string, verb string, args ...string) error {
		cmd := newRootCommand()
		cmd.SetIn(stdin)
		cmd.SetOut(stdout)
		cmd.SetErr(stderr)
		cmd.SetArgs(append(append([]string{verb}, connection...), args...))
		return cmd.ExecuteContext(ctx)
	}
	output := func(connection []string, verb string, args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(ctx, strings.NewReader(""), &stdout, &stderr, connection, verb, args...)
		return stdout.String(), stderr.String(), err
	}
	// streamUntil runs a command that streams until it is stopped, adding
	// a line to member1's container output now and then until the
	// command's output shows it: what streams is what comes after the
	// stream began, which the test cannot see start.
	streamUntil := func(t *testing.T, line string, verb string, args ...string) string {
		t.Helper()
		out := &syncBuffer{}
		streamCtx, cancel := context.WithCancel(ctx)
		ended := make(chan error, 1)
		go func() { ended <- run(streamCtx, strings.NewReader(""), out, io.Discard, admin, verb, args...) }()
		err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			if strings.Contains(out.String(), line) {
				return true, nil
			}
			select {
			case err := <-ended:
				return false, errors.Join(errors.New("ended"), err)
			default:
			}
			return false, member.AppendContainerOutput(line + " " + strconv.FormatInt(time.Now().UnixNano(), 10))
		})
		cancel()
		if err != nil {
			t.Fatalf("%s never showed %q: %v; output %q", verb, line, err, out.String())
		}
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("%s stopped with an error: %v", verb, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s did not end with its context", verb)
		}
		return out.String()
	}

	t.Run("logs", func(t *testing.T) {
		golden, err := os.ReadFile(filepath.Join("testdata", "logs-member1.golden"))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{"deployment/web", pod.Name} {
			out, errOut, err := output(admin, "logs", target, "-n", ns, "-C", "member1")
			if err != nil {
				t.Fatalf("logs %s: %v\n%s", target, err, errOut)
			}
			if diff := cmp.Diff(string(golden), out); diff != "" {
				t.Errorf("logs %s (-want +got):\n%s", target, diff)
			}
		}
		out, _, err := output(admin, "logs", pod.Name, "-n", ns, "--cluster", "member1", "--tail", "1", "-c", "app")
		if want := strings.SplitAfter(string(golden), "\n")[1]; err != nil || out != want {
			t.Errorf("logs --tail 1: %q, %v; want %q", out, err, want)
		}
	})

	t.Run("logs -f streams", func(t *testing.T) {
		out := streamUntil(t, "followed", "logs", "-f", pod.Name, "-n", ns, "-C", "member1")
		if !strings.HasPrefix(out, "member1: kwok simulates") {
			t.Errorf("logs -f does not start with the logs so far: %q", out)
		}
	})

	t.Run("exec", func(t *testing.T) {
		out, errOut, err := output(admin, "exec", pod.Name, "-n", ns, "-C", "member1", "--", "echo", "hi")
		if err != nil || out != "hi\n" {
			t.Errorf("exec -- echo hi: %q, %v\n%s", out, err, errOut)
		}
		// kwok never closes a command's stdin, so the command reads a
		// line rather than up to the end.
		var stdout bytes.Buffer
		err = run(ctx, strings.NewReader("from stdin\n"), &stdout, io.Discard, admin, "exec", "-i", "deployment/web", "-n", ns, "-C", "member1", "--", "sh", "-c", `read line; echo "got $line"`)
		if err != nil || stdout.String() != "got from stdin\n" {
			t.Errorf("exec -i -- sh -c 'read line; ...': %q, %v", stdout.String(), err)
		}
	})

	// kubectl speaks WebSocket and falls back to SPDY when an upgrade to
	// it fails; each must pass the proxy on its own.
	t.Run("exec over each protocol through the proxy", func(t *testing.T) {
		cfg := rest.CopyConfig(fed.ControlPlane.Config)
		cfg.Host = clusterProxyURL(cfg.Host, "member1")
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		u := kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod.Name).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Command: []string{"echo", "hi"}, Stdout: true, Stderr: true}, clientgoscheme.ParameterCodec).URL()
		websocket, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
		if err != nil {
			t.Fatal(err)
		}
		spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			t.Fatal(err)
		}
		for protocol, e := range map[string]remotecommand.Executor{"websocket": websocket, "spdy": spdy} {
			var stdout, stderr bytes.Buffer
			err := e.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
			if err != nil || stdout.String() != "hi\n" {
				t.Errorf("exec over %s: %q, %v\n%s", protocol, stdout.String(), err, stderr.String())
			}
		}
	})

	t.Run("attach", func(t *testing.T) {
		out := streamUntil(t, "attached", "attach", pod.Name, "-n", ns, "-C", "member1")
		if strings.Contains(out, "kwok simulates") {
			t.Errorf("attach showed output from before it attached: %q", out)
		}
	})

	t.Run("completion of the member's pods and containers", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"logs", "-n", ns, "-C", "member1", ""}, pod.Name},
			{[]string{"logs", "-n", ns, "-C", "member1", pod.Name, ""}, "app"},
			{[]string{"exec", "-n", ns, "-C", "member1", "we"}, pod.Name},
			{[]string{"attach", "-n", ns, "-C", "member1", pod.Name, "-c", ""}, "app"},
		} {
			var out bytes.Buffer
			cmd := newRootCommand()
			cmd.SetOut(&out)
			cmd.SetErr(io.Discard)
			cmd.SetArgs(append(append([]string{"__complete"}, tc.args[:1]...), append(admin, tc.args[1:]...)...))
			if err := cmd.ExecuteContext(ctx); err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			if lines := strings.Split(out.String(), "\n"); !slices.Contains(lines, tc.want) {
				t.Errorf("completing %v: %q, want %q among them", tc.args, out.String(), tc.want)
			}
		}
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetArgs(append(append([]string{"__complete", "logs"}, admin...), "-n", ns, ""))
		if err := cmd.ExecuteContext(ctx); err != nil || strings.Contains(out.String(), pod.Name) {
			t.Errorf("completing without --cluster: %q, %v; want no pods", out.String(), err)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		if err := cp.Create(ctx, &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "gone"},
			Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"},
		}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"logs", pod.Name, "-n", ns}, "--cluster (-C) is required"},
			{[]string{"exec", pod.Name, "-n", ns, "--", "true"}, "--cluster (-C) is required"},
			{[]string{"attach", pod.Name, "-n", ns}, "--cluster (-C) is required"},
			{[]string{"logs", pod.Name, "-n", ns, "-C", "member9"}, `--cluster: "member9" is not a member cluster`},
			{[]string{"exec", pod.Name, "-n", ns, "-C", "gone", "--", "true"}, "cluster gone is not Ready"},
			{[]string{"logs", "nope", "-n", ns, "-C", "member1"}, `pods "nope" not found in namespace "shop" in cluster member1 (see flotillactl get pods --operation-scope members -C member1)`},
			{[]string{"attach", "nope", "-n", ns, "-C", "member1"}, `pods "nope" not found in cluster member1`},
			{[]string{"exec", pod.Name, "-n", ns, "-C", "member1"}, "you must specify at least one command for the container"},
			{[]string{"exec", pod.Name, "-n", ns, "-C", "member1", "-c", "sidecar", "--", "true"}, "container sidecar is not valid"},
			{[]string{"logs", pod.Name, "-n", ns, "-C", "member1", "--since", "1h", "--since-time", "2020-01-01T00:00:00Z"}, "at most one of `sinceTime` or `sinceSeconds` may be specified"},
		} {
			_, _, err := output(admin, tc.args[0], tc.args[1:]...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one with %q", tc.args, err, tc.want)
			}
		}
	})

	t.Run("a user the member does not allow gets its refusal", func(t *testing.T) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"}}
		user := "system:serviceaccount:" + ns + ":viewer"
		for _, obj := range []client.Object{
			sa,
			// The control plane lets the user through the proxy ...
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-user"}, Rules: []rbacv1.PolicyRule{
				{Verbs: []string{"get", "list", "create"}, APIGroups: []string{clusterv1alpha1.GroupVersion.Group}, Resources: []string{"clusters", "clusters/proxy"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy-user"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "proxy-user"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}},
		} {
			if err := cp.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		// ... and member1 lets them see pods, not their logs or exec.
		for _, obj := range []client.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"}, Rules: []rbacv1.PolicyRule{
				{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "viewer"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
		} {
			if err := member.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
		if err := cp.SubResource("token").Create(ctx, sa, req); err != nil {
			t.Fatal(err)
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["cp"] = &clientcmdapi.Cluster{Server: fed.ControlPlane.Endpoint, CertificateAuthorityData: fed.ControlPlane.CAData}
		cfg.AuthInfos["viewer"] = &clientcmdapi.AuthInfo{Token: req.Status.Token}
		cfg.Contexts["viewer"] = &clientcmdapi.Context{Cluster: "cp", AuthInfo: "viewer", Namespace: ns}
		cfg.CurrentContext = "viewer"
		kubeconfig := filepath.Join(t.TempDir(), "viewer.kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
			t.Fatal(err)
		}
		viewer := []string{"--kubeconfig", kubeconfig}
		// RBAC reaches the API servers' caches in a moment; the pod's
		// logs are refused for good once its reading is allowed.
		var err error
		for _, verb := range []string{"logs", "exec"} {
			args := []string{pod.Name, "-C", "member1"}
			if verb == "exec" {
				args = append(args, "--", "true")
			}
			pollErr := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				_, _, err = output(viewer, verb, args...)
				return err != nil && strings.Contains(err.Error(), "cluster member1") && strings.Contains(err.Error(), "pods/"), nil
			})
			if pollErr != nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), `User "`+user+`"`) {
				t.Errorf("%s as %s: %v, want member1's refusal of the user", verb, user, err)
			}
		}
	})
}

// propagatedPod starts a federation with one member, the controller-manager
// and the scheduler, propagates a Deployment web of namespace shop to
// member1 and returns its running pod there once member1 is Ready.
func propagatedPod(t *testing.T) (*localfed.Federation, client.Client, corev1.Pod) {
	t.Helper()
	ctx := t.Context()
	fed, err := localfed.Start(ctx, localfed.Options{Members: 1, Nodes: localfed.NodeOptions{Count: 1},
		AggregatedAPIServer: true, WorkDir: t.TempDir(), StartTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fed.Close() })
	// The controller-manager propagates and marks member1 Ready, which the
	// commands check; the scheduler places the Deployment.
	runComponents(t, fed)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1alpha1.AddToScheme, clusterv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := client.New(fed.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "shop"
	labels := map[string]string{"app": "web"}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
				},
			},
		},
		&policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			},
		},
	} {
		if err := cp.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	member := fed.Member("member1")
	var pod corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := member.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				pod = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no pod of the propagated Deployment runs in member1: %v", err)
	}
	// Until member1 is Ready the commands refuse to go there.
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var c clusterv1alpha1.Cluster
		if err := cp.Get(ctx, client.ObjectKey{Name: "member1"}, &c); err != nil {
			return false, nil
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == clusterv1alpha1.ClusterConditionReady && cond.Status == metav1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("member1 never Ready: %v", err)
	}

	return fed, cp, pod
}

// syncBuffer is a bytes.Buffer a streaming command writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
