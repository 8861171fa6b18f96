package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/localfed"
)

// TestTop reads pod and node metrics of two members from the control
// plane's aggregated metrics.k8s.io and through each member's proxy.
func TestTop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local federation")
	}
	ctx := t.Context()
	fed, err := localfed.Start(ctx, localfed.Options{Members: 2, Nodes: localfed.NodeOptions{Count: 1},
		AggregatedAPIServer: true, Metrics: true, MetricsAdapter: true, WorkDir: t.TempDir(), StartTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fed.Close() })
	// The controller-manager marks the members Ready, which the metrics
	// adapter asks only.
	runComponents(t, fed)

	const ns = "top"
	labels := map[string]string{"app": "web"}
	for _, m := range fed.Members {
		if err := m.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := m.Client.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
				},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fed.SetPodUsage(ctx, ns, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, error) {
		cmd := newRootCommand()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"top", "--kubeconfig", fed.KubeconfigPath, "--context", localfed.ControlPlaneName}, args...))
		err := cmd.ExecuteContext(ctx)
		return out.String() + errOut.String(), err
	}
	// until runs the command until its output matches every pattern.
	until := func(what string, patterns []string, args ...string) {
		t.Helper()
		var last string
		var lastErr error
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
			last, lastErr = run(args...)
			if lastErr != nil {
				return false, nil
			}
			for _, p := range patterns {
				if !regexp.MustCompile(p).MatchString(last) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("%s: %v; last output:\n%s(error %v)", what, err, last, lastErr)
		}
	}

	until("pods of both members from the control plane", []string{
		`(?m)^NAME\s+CLUSTER\s+CPU\(cores\)\s+MEMORY\(bytes\)$`,
		`(?m)^web-\S+\s+member1\s+(19[89]|20[012])m\s+1Mi$`,
		`(?m)^web-\S+\s+member2\s+(19[89]|20[012])m\s+1Mi$`,
	}, "pod", "-n", ns, "-l", "app=web")

	until("pods of member2 through its proxy", []string{`(?m)^web-\S+\s+member2\s+`}, "pod", "-n", ns, "--operation-scope", "members", "-C", "member2", "--no-headers")
	out, err := run("pod", "-n", ns, "--operation-scope", "members", "-C", "member2", "--no-headers")
	if err != nil || strings.Contains(out, "member1") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("top pod -C member2: %v\n%s", err, out)
	}

	until("nodes of both members", []string{
		`(?m)^NAME\s+CLUSTER\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)$`,
		`(?m)^member1-node1\s+member1\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%$`,
		`(?m)^member2-node1\s+member2\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%$`,
	}, "node")

	if _, err := run("pod", "-C", "member1"); err == nil || !strings.Contains(err.Error(), "--clusters") {
		t.Errorf("top pod -C with the control plane's scope: error %v, want one naming --clusters", err)
	}
}

// runComponents runs the controller-manager and the scheduler against fed
// until the test ends, failing it if either fails before.
func runComponents(t *testing.T, fed *localfed.Federation) {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	done, err := startComponents(ctx, fed, false)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the controller-manager or scheduler failed: %v", err)
		}
	})
}
