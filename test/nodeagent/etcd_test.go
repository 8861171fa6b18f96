package nodeagent_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/test/nodeagent"
)

// TestEtcdStatefulSet runs the real etcd as a one-replica StatefulSet with a
// volumeClaimTemplate: its claim is provisioned and bound, it finds its peer
// URL by its pod's DNS name, it serves through a Service, and its data
// outlives its pod.
func TestEtcdStatefulSet(t *testing.T) {
	t.Parallel()
	e := setup(t, "etcd")
	ctx := t.Context()
	labels := map[string]string{"app": "etcd"}
	services := []*corev1.Service{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "etcd"},
			Spec: corev1.ServiceSpec{
				ClusterIP:                corev1.ClusterIPNone,
				PublishNotReadyAddresses: true,
				Selector:                 labels,
				Ports:                    []corev1.ServicePort{{Name: "client", Port: 2379}, {Name: "peer", Port: 2380}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "etcd-client"},
			Spec: corev1.ServiceSpec{
				Selector: labels,
				Ports:    []corev1.ServicePort{{Name: "client", Port: 2379, TargetPort: intstr.FromString("client")}},
			},
		},
	}
	for _, svc := range services {
		if _, err := e.cs.CoreV1().Services(e.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	peer := "http://$(POD_NAME).etcd.$(POD_NAMESPACE).svc.cluster.local:2380"
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd"},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: "etcd",
			Replicas:    ptr.To[int32](1),
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					Containers: []corev1.Container{{
						Name:    "etcd",
						Image:   etcdImage,
						Command: []string{"/usr/local/bin/etcd"},
						Args: []string{
							"--name=$(POD_NAME)",
							"--data-dir=/var/lib/etcd/data",
							"--listen-client-urls=http://$(POD_IP):2379",
							"--advertise-client-urls=http://$(POD_NAME).etcd.$(POD_NAMESPACE).svc.cluster.local:2379",
							"--listen-peer-urls=http://$(POD_IP):2380",
							"--initial-advertise-peer-urls=" + peer,
							"--initial-cluster=$(POD_NAME)=" + peer,
							"--initial-cluster-state=new",
							"--unsafe-no-fsync",
							"--log-level=warn",
						},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: fieldRef("metadata.name")},
							{Name: "POD_NAMESPACE", ValueFrom: fieldRef("metadata.namespace")},
							{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")},
						},
						Ports: []corev1.ContainerPort{{Name: "client", ContainerPort: 2379}, {Name: "peer", ContainerPort: 2380}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("client")}},
							PeriodSeconds: 1,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/etcd"}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi"),
					}},
				},
			}},
		},
	}
	if _, err := e.cs.AppsV1().StatefulSets(e.ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := e.waitPod("etcd-0", "Ready", podReady)

	claim, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, "data-etcd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.Phase != corev1.ClaimBound || ptr.Deref(claim.Spec.StorageClassName, "") != nodeagent.StorageClassName {
		t.Errorf("claim %s: phase %s, class %v; want Bound, %s", claim.Name, claim.Status.Phase, claim.Spec.StorageClassName, nodeagent.StorageClassName)
	}
	members, _ := filepath.Glob(filepath.Join(fed.Get(t).WorkDir, "nodeagent", "claims", e.ns+"_data-etcd-0_*", "data", "member"))
	if len(members) != 1 {
		t.Errorf("etcd's data is not in the claim's directory: %v", members)
	}

	client := "http://etcd-client." + e.ns + ".svc.cluster.local:2379"
	if err := e.etcd(client+"/v3/kv/put", `{"key":"%s","value":"%s"}`, "greeting", "hello"); err != nil {
		t.Fatal(err)
	}

	// A new pod of the StatefulSet finds the data of the old one.
	if err := e.cs.CoreV1().Pods(e.ns).Delete(ctx, "etcd-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPod("etcd-0", "replaced and Ready", func(p *corev1.Pod) bool { return p.UID != first.UID && podReady(p) })
	e.eventually("the key read back", func(context.Context) (bool, error) {
		err := e.etcd(client+"/v3/kv/range", `{"key":"%s"}`, "greeting", base64.StdEncoding.EncodeToString([]byte("hello")))
		return err == nil, err
	})
}

// etcd posts to etcd's JSON gateway a body made of format and the base64 of
// key, and checks that the answer holds want (already encoded) if given.
func (e *env) etcd(url, format, key, want string) error {
	body := fmt.Sprintf(format, base64.StdEncoding.EncodeToString([]byte(key)), base64.StdEncoding.EncodeToString([]byte(want)))
	if strings.Count(format, "%s") == 1 {
		body = fmt.Sprintf(format, base64.StdEncoding.EncodeToString([]byte(key)))
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: e.agent.DialContext}}
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, answer)
	}
	if strings.Count(format, "%s") == 1 && !strings.Contains(string(answer), want) {
		return fmt.Errorf("POST %s: %s, want %s in it", url, answer, want)
	}
	return nil
}
