package clusterstatus

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/podrequests"
)

func TestAPIEnablements(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod"}, {Name: "pods/status", Kind: "Pod"}, {Name: "configmaps", Kind: "ConfigMap"},
		}},
		nil,
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments/scale", Kind: "Scale"}, {Name: "deployments", Kind: "Deployment"},
		}},
		{GroupVersion: "metrics.k8s.io/v1beta1"},
	}
	want := []clusterv1alpha1.APIEnablement{
		{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
		{GroupVersion: "metrics.k8s.io/v1beta1"},
		{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "pods", Kind: "Pod"}}},
	}
	if diff := cmp.Diff(want, apiEnablements(lists)); diff != "" {
		t.Errorf("apiEnablements (-want +got):\n%s", diff)
	}
}

func TestAPIEnablementsCondition(t *testing.T) {
	some := []clusterv1alpha1.APIEnablement{{GroupVersion: "v1"}}
	partial := &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		{Group: "metrics.k8s.io", Version: "v1beta1"}: errors.New("the server is currently unable to handle the request"),
	}}
	tests := []struct {
		name        string
		enablements []clusterv1alpha1.APIEnablement
		partial     error
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantInMsg   string
	}{
		{name: "complete", enablements: some, wantStatus: metav1.ConditionTrue, wantReason: clusterv1alpha1.APIEnablementsReasonComplete},
		{name: "partial", enablements: some, partial: partial, wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.APIEnablementsReasonPartial, wantInMsg: "metrics.k8s.io/v1beta1"},
		{name: "empty", wantStatus: metav1.ConditionFalse, wantReason: clusterv1alpha1.APIEnablementsReasonEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apiEnablementsCondition(tt.enablements, tt.partial, 3)
			if got.Type != clusterv1alpha1.ClusterConditionCompleteAPIEnablements || got.Status != tt.wantStatus || got.Reason != tt.wantReason ||
				got.ObservedGeneration != 3 || !strings.Contains(got.Message, tt.wantInMsg) {
				t.Errorf("condition = %+v; want status %s reason %s message containing %q", got, tt.wantStatus, tt.wantReason, tt.wantInMsg)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	n := node("n", true, list("cpu", "8"))
	n.Labels = map[string]string{"big": "label"}
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"registry/image:tag"}}}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse})
	gotNode, _ := trimNode(n)
	wantNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
		Allocatable: list("cpu", "8"),
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}}
	if diff := cmp.Diff(wantNode, gotNode, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("trimNode (-want +got):\n%s", diff)
	}

	p := pod("p", on("n"), containers(container("cpu", "1")), inits(sidecar("cpu", "2")), overhead(list("cpu", "1m")))
	p.Spec.Containers[0].Image = "image"
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
	p.Spec.Containers[0].Resources.Limits = list("cpu", "4")
	p.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}
	gotPod, _ := trimPod(p)
	if diff := cmp.Diff(podrequests.ForPod(&p.Spec), podrequests.ForPod(&gotPod.(*corev1.Pod).Spec), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("trimming changed the pod's requests (-want +got):\n%s", diff)
	}
	tp := gotPod.(*corev1.Pod)
	if tp.Spec.Containers[0].Image != "" || tp.Spec.Containers[0].Env != nil || tp.Spec.Containers[0].Resources.Limits != nil || tp.Annotations != nil {
		t.Errorf("trimPod kept more than needed: %+v", tp)
	}
	if tp.Spec.NodeName != "n" || tp.Status.Phase != corev1.PodRunning || tp.Namespace != "default" || tp.Name != "p" {
		t.Errorf("trimPod lost identity, node or phase: %+v", tp)
	}

	tombstone := "not a node"
	if got, _ := trimNode(tombstone); got != tombstone {
		t.Error("trimNode changed something that is not a Node")
	}
}

func TestRelevantChange(t *testing.T) {
	base := func() *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
				{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue},
			}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*clusterv1alpha1.Cluster)
		want   bool
	}{
		{name: "own status patch", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.KubernetesVersion = "v1" }},
		{name: "finalizer added", mutate: func(c *clusterv1alpha1.Cluster) { c.Finalizers = []string{"x"} }},
		{name: "spec", mutate: func(c *clusterv1alpha1.Cluster) { c.Generation++ }, want: true},
		{name: "deleted", mutate: func(c *clusterv1alpha1.Cluster) { now := metav1.Now(); c.DeletionTimestamp = &now }, want: true},
		{name: "ready flips", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newC := base()
			tt.mutate(newC)
			if got := relevantChange(base(), newC); got != tt.want {
				t.Errorf("relevantChange = %v, want %v", got, tt.want)
			}
		})
	}
}
