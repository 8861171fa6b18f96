package localfed_test

import (
	"bytes"
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMemberServesLogsExecAttach reads a pod's logs, runs a command in it
// and attaches to it through the member's own API server, which calls kwok
// as the node's kubelet, over both streaming protocols kubectl speaks.
func TestMemberServesLogsExecAttach(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	member := f.Member("member2")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "streams"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
	}
	if err := member.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		err := member.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && pod.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("pod never Running (status %+v): %v", pod.Status, err)
	}
	kube, err := kubernetes.NewForConfig(member.Config)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("logs", func(t *testing.T) {
		out, err := kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := "member2: kwok simulates this member's pods and runs no containers.\n" +
			"This output stands in for every container's; exec runs commands on the machine of the federation.\n"
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("logs = %q, want it to start with %q", out, want)
		}
	})

	executors := map[string]func(*rest.Config, string) (remotecommand.Executor, error){
		"websocket": func(cfg *rest.Config, url string) (remotecommand.Executor, error) {
			return remotecommand.NewWebSocketExecutor(cfg, "GET", url)
		},
		"spdy": func(cfg *rest.Config, url string) (remotecommand.Executor, error) {
			return remotecommand.NewSPDYExecutor(cfg, "POST", mustParseURL(t, url))
		},
	}
	for protocol, newExecutor := range executors {
		t.Run("exec over "+protocol, func(t *testing.T) {
			exec := func(command ...string) (string, string, error) {
				req := kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
					VersionedParams(&corev1.PodExecOptions{Container: "app", Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
				e, err := newExecutor(member.Config, req.URL().String())
				if err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				err = e.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
				return stdout.String(), stderr.String(), err
			}
			stdout, stderr, err := exec("sh", "-c", "echo hi; echo oops >&2")
			if err != nil || stdout != "hi\n" || stderr != "oops\n" {
				t.Errorf("exec: stdout %q, stderr %q, error %v; want %q, %q and no error", stdout, stderr, err, "hi\n", "oops\n")
			}
			// kwok reports a command's failure as an error naming its
			// exit status, not as the status itself.
			if _, _, err := exec("sh", "-c", "exit 3"); err == nil || !strings.Contains(err.Error(), "exit status 3") {
				t.Errorf("exec of a failing command: error %v, want one naming exit status 3", err)
			}
		})

		t.Run("attach over "+protocol, func(t *testing.T) {
			req := kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("attach").
				VersionedParams(&corev1.PodAttachOptions{Container: "app", Stdout: true, Stderr: true}, scheme.ParameterCodec)
			exec, err := newExecutor(member.Config, req.URL().String())
			if err != nil {
				t.Fatal(err)
			}
			out := &syncBuffer{}
			attachCtx, detach := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- exec.StreamWithContext(attachCtx, remotecommand.StreamOptions{Stdout: out, Stderr: out})
			}()
			// Attach streams what comes after it started, which the
			// test cannot see; a line written now and then shows once
			// it has.
			line := "attached over " + protocol
			err = wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
				if strings.Contains(out.String(), line) {
					return true, nil
				}
				return false, member.AppendContainerOutput(line + " " + strconv.FormatInt(time.Now().UnixNano(), 10))
			})
			detach()
			if err != nil {
				t.Fatalf("attach never showed %q: %v; output %q", line, err, out.String())
			}
			select {
			case err := <-done:
				// Detached: whatever it says about that is no failure.
				t.Logf("attach stopped: %v", err)
			case <-time.After(eventually):
				t.Fatal("attach did not end when its context did")
			}
			if strings.Contains(out.String(), "kwok simulates") {
				t.Errorf("attach showed output from before it started: %q", out.String())
			}
		})
	}
}

// syncBuffer is a bytes.Buffer that a stream writes while the test reads.
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

func mustParseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
