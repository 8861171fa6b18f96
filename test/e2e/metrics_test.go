package e2e

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// metricsList is the part of a metrics.k8s.io/v1beta1 list the scenario
// reads: PodMetricsList or NodeMetricsList.
type metricsList struct {
	Items []struct {
		Metadata   metav1.ObjectMeta   `json:"metadata"`
		Usage      corev1.ResourceList `json:"usage"`
		Containers []struct {
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// TestMetricsOverMembers reads, from the control plane's metrics.k8s.io,
// the pod metrics of a Deployment duplicated on two members, turns the
// pods' simulated CPU up in every member and sees it, and lists the nodes
// of the members, as kubectl top does against karmada-apiserver.
func TestMetricsOverMembers(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-metrics")
	create(t, deployment(ns, "web", 2, "nginx"))
	create(t, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		},
	})
	kube := kubernetes.NewForConfigOrDie(fed.ControlPlane.Config)
	read := func(ctx context.Context, path string, params ...string) (metricsList, error) {
		req := kube.Discovery().RESTClient().Get().AbsPath(path)
		for i := 0; i+1 < len(params); i += 2 {
			req = req.Param(params[i], params[i+1])
		}
		var l metricsList
		body, err := req.DoRaw(ctx)
		if err != nil {
			return l, err
		}
		return l, json.Unmarshal(body, &l)
	}
	podsAt := func(cpu string) {
		t.Helper()
		q := resource.MustParse(cpu)
		want := q.AsApproximateFloat64()
		eventually(t, "two pods of web per member at "+cpu+" CPU in the control plane's metrics", func(ctx context.Context) (bool, error) {
			l, err := read(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+ns+"/pods", "labelSelector", "app=web")
			if err != nil {
				return false, err
			}
			perMember := map[string]int{}
			for _, item := range l.Items {
				for _, c := range item.Containers {
					q := c.Usage[corev1.ResourceCPU]
					if math.Abs(q.AsApproximateFloat64()-want) > want/10 {
						return false, nil
					}
				}
				perMember[item.Metadata.Annotations["resource.karmada.io/query-from-cluster"]]++
			}
			return len(l.Items) == 4 && perMember["member1"] == 2 && perMember["member2"] == 2, nil
		})
	}
	podsAt("1m")
	if err := fed.SetPodUsage(t.Context(), ns, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}); err != nil {
		t.Fatal(err)
	}
	podsAt("300m")

	// member3 is left out: failover scenarios stop it.
	eventually(t, "node metrics of member1 and member2 in the control plane", func(ctx context.Context) (bool, error) {
		l, err := read(ctx, "/apis/metrics.k8s.io/v1beta1/nodes")
		if err != nil {
			return false, err
		}
		members := map[string]bool{}
		for _, item := range l.Items {
			if _, ok := item.Usage[corev1.ResourceCPU]; ok {
				members[item.Metadata.Annotations["resource.karmada.io/query-from-cluster"]] = true
			}
		}
		for _, m := range []string{"member1", "member2"} {
			if !members[m] {
				return false, nil
			}
		}
		return true, nil
	})
}
