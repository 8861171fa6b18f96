package nodeagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestDeployment runs a Deployment of two echo servers behind a Service:
// the pods are Ready only once their real readiness probe passes, see their
// Secret and ConfigMap at the mount paths of their args and env, reach the
// Service by name from inside, reach the API server with their
// ServiceAccount, and see a Secret's update.
func TestDeployment(t *testing.T) {
	t.Parallel()
	e := setup(t, "deploy")
	ctx := t.Context()
	labels := map[string]string{"app": "echo"}

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Data:       map[string][]byte{"greeting": []byte("hello")},
	}
	if _, err := e.cs.CoreV1().Secrets(e.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No key "ready" yet: the readiness probe fails until it comes.
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "echo"}, Data: map[string]string{"mode": "test"}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx, config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	svc, err := e.cs.CoreV1().Services(e.ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	container := echoContainer(
		"--file=/etc/echo/secret/greeting",
		"--ready-file=/etc/echo/config/ready",
		"--name=$(POD_NAME)",
		"--name=$$(POD_NAME)",
	)
	container.Env = append(container.Env,
		corev1.EnvVar{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "echo"}, Key: "greeting",
		}}},
		corev1.EnvVar{Name: "MESSAGE", Value: "$(GREETING) from $(POD_NAME)"},
		corev1.EnvVar{Name: "CONFIG_DIR", Value: "/etc/echo/config"},
	)
	container.EnvFrom = []corev1.EnvFromSource{{
		Prefix:       "CFG_",
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "echo"}},
	}}
	container.VolumeMounts = []corev1.VolumeMount{
		{Name: "secret", MountPath: "/etc/echo/secret"},
		{Name: "config", MountPath: "/etc/echo/config"},
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{container},
					Volumes: []corev1.Volume{
						{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "echo"}}},
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "echo"},
						}}},
					},
				},
			},
		},
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Running, serving, and not Ready: the probe finds no ready file.
	var pods []corev1.Pod
	e.eventually("two pods running", func(ctx context.Context) (bool, error) {
		list, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
		if err != nil {
			return false, err
		}
		pods = list.Items
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				running++
			}
		}
		return running == 2, nil
	})
	for _, p := range pods {
		if _, err := e.get("http://" + p.Status.PodIP + ":8080/healthz"); err != nil {
			t.Fatalf("pod %s does not serve: %v", p.Name, err)
		}
	}
	time.Sleep(2 * time.Second) // a couple of probe periods
	for _, p := range pods {
		if p := e.pod(p.Name); podReady(p) {
			t.Errorf("pod %s is Ready before its ready file exists", p.Name)
		}
	}

	config.Data["ready"] = "yes"
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Update(ctx, config, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Deployment available", func(ctx context.Context) (bool, error) {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, deploy.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.AvailableReplicas == 2 && d.Status.ReadyReplicas == 2, nil
	})

	pod := e.pod(pods[0].Name)
	t.Run("args and env", func(t *testing.T) { checkArgsAndEnv(e.with(t), pod) })
	t.Run("Service", func(t *testing.T) { checkService(e.with(t), svc) })
	t.Run("ServiceAccount", func(t *testing.T) { checkServiceAccount(e.with(t), pod) })
	t.Run("Secret update", func(t *testing.T) {
		e := e.with(t)
		secret.Data["greeting"] = []byte("bonjour")
		if _, err := e.cs.CoreV1().Secrets(e.ns).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("the new greeting in the file", func(context.Context) (bool, error) {
			body, err := e.get(podURL(pod, "/file"))
			return body == "bonjour", err
		})
	})

	logs, err := e.agent.Logs(e.ns, pod.Name, "echo")
	if err != nil || !strings.Contains(string(logs), "echoserver listening on "+pod.Status.PodIP+":8080") {
		t.Errorf("logs: %q, %v", logs, err)
	}
}

// podURL is a URL of the echo server of pod.
func podURL(pod *corev1.Pod, path string) string {
	return "http://" + pod.Status.PodIP + ":8080" + path
}

// checkArgsAndEnv checks what the echo server of pod sees: its args with
// $(VAR) expanded and mount paths rewritten to the volumes, its env.
func checkArgsAndEnv(e *env, pod *corev1.Pod) {
	t := e.t
	body, err := e.get(podURL(pod, "/info"))
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Args     []string
		Env      map[string]string
		Hostname string
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil {
		t.Fatal(err)
	}
	file := strings.TrimPrefix(info.Args[2], "--file=")
	wantArgs := []string{
		"--listen=" + pod.Status.PodIP + ":8080",
		"--file=" + file,
		"--ready-file=" + strings.TrimSuffix(file, "/secret/greeting") + "/config/ready",
		"--name=" + pod.Name,
		"--name=$(POD_NAME)",
	}
	if !slices.Equal(info.Args[1:], wantArgs) {
		t.Errorf("args = %q, want %q", info.Args[1:], wantArgs)
	}
	if file == "/etc/echo/secret/greeting" || !strings.HasSuffix(file, "/volumes/secret/greeting") {
		t.Errorf("--file = %s, want the Secret volume's directory", file)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "hello" {
		t.Errorf("%s holds %q (%v)", file, data, err)
	}
	for name, want := range map[string]string{
		"GREETING":                "hello",
		"MESSAGE":                 "hello from " + pod.Name,
		"CFG_mode":                "test",
		"POD_IP":                  pod.Status.PodIP,
		"KUBERNETES_SERVICE_HOST": "127.0.0.1",
	} {
		if info.Env[name] != want {
			t.Errorf("env %s = %q, want %q", name, info.Env[name], want)
		}
	}
	if dir := info.Env["CONFIG_DIR"]; !strings.HasSuffix(dir, "/volumes/config") {
		t.Errorf("CONFIG_DIR = %q, want the ConfigMap volume's directory", dir)
	}
	if info.Hostname != pod.Name {
		t.Errorf("hostname = %q, want %q", info.Hostname, pod.Name)
	}
}

// checkService reaches the Service by name and NodePort from the test, round
// robin over both pods, and by name from inside another pod, through that
// pod's own /etc/hosts.
func checkService(e *env, svc *corev1.Service) {
	t := e.t
	seen := map[string]bool{}
	for range 6 {
		body, err := e.get("http://echo." + e.ns + ".svc.cluster.local/info")
		if err != nil {
			t.Fatal(err)
		}
		var info struct{ Hostname string }
		_ = json.Unmarshal([]byte(body), &info)
		seen[info.Hostname] = true
	}
	if len(seen) != 2 {
		t.Errorf("the Service reached %v, want both pods", seen)
	}
	if _, err := e.get(fmt.Sprintf("http://127.0.0.1:%d/healthz", svc.Spec.Ports[0].NodePort)); err != nil {
		t.Errorf("NodePort: %v", err)
	}

	e.create(echoPod("client"))
	client := e.waitPod("client", "Ready", podReady)
	inside := "http://echo." + e.ns + ".svc.cluster.local/info"
	body, err := e.get(podURL(client, "/fetch?url="+url.QueryEscape(inside)))
	var info struct{ Hostname string }
	if err != nil || json.Unmarshal([]byte(body), &info) != nil || !strings.HasPrefix(info.Hostname, "echo-") {
		t.Errorf("fetching %s from a pod: %q, %v", inside, body, err)
	}
	hosts, err := e.get(podURL(client, "/read?path=/etc/hosts"))
	if err != nil || !strings.Contains(hosts, svc.Spec.ClusterIP+"\techo."+e.ns+".svc.cluster.local echo."+e.ns+".svc echo."+e.ns) {
		t.Errorf("the pod's /etc/hosts:\n%s(%v)", hosts, err)
	}
	// The host's own /etc/hosts is left alone.
	if own, err := os.ReadFile("/etc/hosts"); err != nil || strings.Contains(string(own), ".svc.cluster.local") {
		t.Errorf("the host's /etc/hosts changed:\n%s(%v)", own, err)
	}
}

// checkServiceAccount reads the ServiceAccount volume where client-go's
// in-cluster config does, and reaches the API server with it.
func checkServiceAccount(e *env, pod *corev1.Pod) {
	t := e.t
	if ns, err := e.get(podURL(pod, "/read?path=/var/run/secrets/kubernetes.io/serviceaccount/namespace")); err != nil || ns != e.ns {
		t.Errorf("namespace file = %q, %v", ns, err)
	}
	if body, err := e.get(podURL(pod, "/kube")); err != nil || !strings.Contains(body, "gitVersion") {
		t.Errorf("/version with the in-cluster credentials: %q, %v", body, err)
	}
}
