package nodeagent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
	"github.com/flotilla-io/flotilla/test/nodeagent"
)

// Images of the tests: the echo server built from testdata, and etcd from
// the Kubernetes binaries.
const (
	echoImage = "registry.example/flotilla/echoserver:test"
	etcdImage = "registry.example/etcd:v3"
)

// eventually bounds each wait for the agent to act.
const eventually = 30 * time.Second

var fed = &localfedtest.Shared{
	Options:     localfed.Options{Host: true, NoControlPlane: true},
	BeforeClose: func() { suite.stop() },
}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

// suite is the agent the tests share, started with the federation.
var suite sharedAgent

type sharedAgent struct {
	once  sync.Once
	agent *nodeagent.Agent
	err   error
}

func (s *sharedAgent) stop() {
	if s.agent != nil {
		s.agent.Stop()
	}
}

// env is what a test works with: the agent, a client of the host and a
// namespace of its own.
type env struct {
	t     *testing.T
	agent *nodeagent.Agent
	cs    kubernetes.Interface
	ns    string
}

// setup skips the test where the agent cannot run, starts the shared host
// and agent on first use, and makes the namespace ns.
func setup(t *testing.T, ns string) *env {
	t.Helper()
	if err := nodeagent.Supported(); err != nil {
		t.Skipf("node agent unsupported here: %v", err)
	}
	f := fed.Get(t)
	suite.once.Do(func() {
		dir := filepath.Join(f.WorkDir, "nodeagent")
		echo := filepath.Join(dir, "bin", "echoserver")
		if out, err := exec.Command("go", "build", "-o", echo, "./testdata/echoserver").CombinedOutput(); err != nil {
			suite.err = fmt.Errorf("building the echo server: %w\n%s", err, out)
			return
		}
		suite.agent, suite.err = nodeagent.Start(context.Background(), nodeagent.Options{
			Host:     f.Host.Config,
			NodeName: "node1",
			Dir:      dir,
			Images: map[string]string{
				echoImage: echo,
				etcdImage: filepath.Join(f.BinDir, "etcd"),
			},
			Logger: stderrLogger(),
		})
	})
	if suite.err != nil {
		t.Fatal(suite.err)
	}
	cs, err := kubernetes.NewForConfig(f.Host.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, agent: suite.agent, cs: cs, ns: ns}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount.
	e.eventually("the default ServiceAccount", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	return e
}

// with is e for a subtest.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func stderrLogger() logr.Logger {
	verbosity := -1
	if testing.Verbose() {
		verbosity = 0
	}
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, "nodeagent:", prefix, args)
	}, funcr.Options{Verbosity: verbosity})
}

// eventually polls cond until it holds, failing the test after eventually.
func (e *env) eventually(what string, cond func(ctx context.Context) (bool, error)) {
	e.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(e.t.Context(), 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// get fetches a URL the way a client of the test process reaches pods and
// Services: through the agent's dialer and names.
func (e *env) get(url string) (string, error) {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DialContext: e.agent.DialContext, DisableKeepAlives: true},
	}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body), nil
}

// pod reads a pod.
func (e *env) pod(name string) *corev1.Pod {
	e.t.Helper()
	pod, err := e.cs.CoreV1().Pods(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// waitPod waits until cond holds for the pod called name.
func (e *env) waitPod(name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	e.t.Helper()
	var pod *corev1.Pod
	e.eventually(name+" "+what, func(ctx context.Context) (bool, error) {
		p, err := e.cs.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return cond(p), nil
	})
	return pod
}

// waitGone waits until the pod object is deleted.
func (e *env) waitGone(name string) {
	e.t.Helper()
	e.eventually(name+" deleted", func(ctx context.Context) (bool, error) {
		_, err := e.cs.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// echoContainer runs the echo server on the pod's IP, port 8080 named
// http, ready by its /readyz.
func echoContainer(args ...string) corev1.Container {
	return corev1.Container{
		Name:    "echo",
		Image:   echoImage,
		Command: []string{"/usr/local/bin/echoserver"},
		Args:    append([]string{"--listen=$(POD_IP):8080"}, args...),
		Env: []corev1.EnvVar{
			{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")},
			{Name: "POD_NAME", ValueFrom: fieldRef("metadata.name")},
		},
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe: httpProbe("/readyz", intstr.FromString("http")),
	}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
}

func httpProbe(path string, port intstr.IntOrString) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port}},
		PeriodSeconds:    1,
		FailureThreshold: 1,
	}
}

// echoPod is a pod of one echo server.
func echoPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{echoContainer()}},
	}
}

func (e *env) create(pod *corev1.Pod) {
	e.t.Helper()
	if _, err := e.cs.CoreV1().Pods(e.ns).Create(e.t.Context(), pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestLivenessFailureRestarts(t *testing.T) {
	t.Parallel()
	e := setup(t, "liveness")
	pod := echoPod("sick")
	pod.Spec.Containers[0].LivenessProbe = httpProbe("/healthz", intstr.FromInt32(8080))
	// A first probe may come before the server listens.
	pod.Spec.Containers[0].LivenessProbe.FailureThreshold = 3
	// An exec probe runs a binary of the image map: here the echo server,
	// which exits at once with the code asked.
	pod.Spec.Containers[0].StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"echoserver", "--exit-code=0"}}},
		PeriodSeconds: 1,
	}
	e.create(pod)
	pod = e.waitPod(pod.Name, "Ready", podReady)
	if started := pod.Status.ContainerStatuses[0].Started; started == nil || !*started {
		t.Errorf("started = %v after the startup probe", started)
	}
	if _, err := e.get("http://" + pod.Status.PodIP + ":8080/fail"); err != nil {
		t.Fatal(err)
	}
	pod = e.waitPod(pod.Name, "restarted and Ready again", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1 && podReady(p)
	})
	last := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || !strings.Contains(last.Message, "Liveness probe failed") {
		t.Errorf("last termination %+v, want one for the liveness probe", last)
	}
	// The new process serves, healthy.
	if body, err := e.get("http://" + pod.Status.PodIP + ":8080/healthz"); err != nil || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz after restart = %q, %v", body, err)
	}
}

func TestDeletionStopsTheProcess(t *testing.T) {
	t.Parallel()
	e := setup(t, "deletion")
	pod := echoPod("doomed")
	e.create(pod)
	pod = e.waitPod(pod.Name, "Ready", podReady)
	url := "http://" + pod.Status.PodIP + ":8080/healthz"
	if _, err := e.get(url); err != nil {
		t.Fatal(err)
	}
	if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone(pod.Name)
	if body, err := e.get(url); err == nil {
		t.Errorf("%s still answers after the pod went: %q", url, body)
	}
	if logs, err := e.agent.Logs(e.ns, pod.Name, "echo"); err != nil || !strings.Contains(string(logs), "echoserver listening") {
		t.Errorf("logs of the deleted pod: %q, %v", logs, err)
	}
}

func TestUnknownImageWaitsWithErrImagePull(t *testing.T) {
	t.Parallel()
	e := setup(t, "unknown-image")
	pod := echoPod("ghost")
	pod.Spec.Containers[0].Image = "registry.example/nobody-built-this:1.0"
	e.create(pod)
	pod = e.waitPod(pod.Name, "waiting on its image", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "ErrImagePull"
	})
	if msg := pod.Status.ContainerStatuses[0].State.Waiting.Message; !strings.Contains(msg, "registry.example/nobody-built-this:1.0") {
		t.Errorf("waiting message %q does not name the image", msg)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", pod.Status.Phase)
	}
	if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone(pod.Name)
}

func TestInitContainersThenAFailingContainer(t *testing.T) {
	t.Parallel()
	e := setup(t, "init")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			InitContainers: []corev1.Container{
				{Name: "first", Image: echoImage, Args: []string{"--exit-code=0"}},
				{Name: "second", Image: echoImage, Args: []string{"--exit-code=0"}},
			},
			Containers: []corev1.Container{{Name: "main", Image: echoImage, Args: []string{"--exit-code=3"}}},
		},
	}
	e.create(pod)
	pod = e.waitPod(pod.Name, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	for _, s := range pod.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 || s.State.Terminated.Reason != "Completed" {
			t.Errorf("init container %s: state %+v, want Completed", s.Name, s.State)
		}
	}
	main := pod.Status.ContainerStatuses[0]
	if main.State.Terminated == nil || main.State.Terminated.ExitCode != 3 || main.State.Terminated.Reason != "Error" || main.RestartCount != 0 {
		t.Errorf("container main: %+v, want terminated with 3 and no restart", main)
	}
	logs, err := e.agent.Logs(e.ns, pod.Name, "main")
	if err != nil || !strings.Contains(string(logs), "exiting with 3") {
		t.Errorf("logs of main: %q, %v", logs, err)
	}
}
