package overrides

import (
	"fmt"
	"runtime"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// benchPolicies is 10 policies mixing image, labels, plaintext and args
// overriders, some for every cluster and some for a subset.
func benchPolicies() ([]policyv1alpha1.OverridePolicy, []policyv1alpha1.ClusterOverridePolicy) {
	eu := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: pairs("region", "eu")}}
	cops := []policyv1alpha1.ClusterOverridePolicy{
		cop("mirror", withRule(eu, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Registry, replace, "eu.mirror.io")}})),
		cop("fleet-labels", selecting(deployments()), withRule(nil, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "fleet", "a", "managed-by", "flotilla")}})),
		cop("other-kind", selecting(policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Service"}), replicas("1")),
	}
	ops := []policyv1alpha1.OverridePolicy{
		op("replicas", selecting(deploymentNamed("web")), replicas("5")),
		op("args", selecting(deployments()), withRule(nil, policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "--region-aware")}})),
		op("tag", selecting(deploymentsLabelled("app", "web")), withRule(nil, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{imageOp(policyv1alpha1.Tag, replace, "1.26")}})),
		op("node-selector", withRule(eu, plain(plaintext(add, "/spec/template/spec/nodeSelector", `{"topology.kubernetes.io/region":"eu"}`)))),
		op("annotations", withRule(nil, policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{labelOp(add, "example.io/tier", "gold")}})),
		op("few-clusters", withRule(names("member-0", "member-1", "member-2"), plain(plaintext(replace, "/spec/replicas", "1")))),
		op("resources", selecting(deployments()), withRule(nil, plain(
			plaintext(add, "/spec/template/spec/containers/0/resources", `{"limits":{"cpu":"1","memory":"1Gi"}}`),
			plaintext(replace, "/spec/template/metadata/labels/app", `"web"`),
		))),
	}
	return ops, cops
}

func benchClusters(n int) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, n)
	for i := range out {
		region := "us"
		if i%2 == 0 {
			region = "eu"
		}
		out[i] = cluster(fmt.Sprintf("member-%d", i), clusterLabels("region", region), located("aws", region+"-1", region+"-1a"))
	}
	return out
}

// BenchmarkApply renders one Deployment for 100 clusters through 10
// policies with one Renderer, as the binding controller does per binding.
func BenchmarkApply(b *testing.B) {
	ops, cops := benchPolicies()
	clusters := benchClusters(100)
	obj := deployment(b)
	benchPerCluster(b, len(clusters), func() {
		r := NewRenderer(ops, cops)
		for _, c := range clusters {
			if _, _, err := r.Apply(obj, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApplyOneShot is the same through the package-level Apply, which
// prepares the policies again for every cluster.
func BenchmarkApplyOneShot(b *testing.B) {
	ops, cops := benchPolicies()
	clusters := benchClusters(100)
	obj := deployment(b)
	benchPerCluster(b, len(clusters), func() {
		for _, c := range clusters {
			if _, _, err := Apply(obj, c, ops, cops); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMatching is the cost of deciding which rules apply.
func BenchmarkMatching(b *testing.B) {
	ops, cops := benchPolicies()
	clusters := benchClusters(100)
	obj := deployment(b)
	r := NewRenderer(ops, cops)
	benchPerCluster(b, len(clusters), func() {
		for _, c := range clusters {
			_ = r.Matching(obj, c)
		}
	})
}

// benchPerCluster runs render, which renders n clusters, and reports time
// and allocations per cluster.
func benchPerCluster(b *testing.B, n int, render func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		render()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	clusters := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/clusters, "ns/cluster")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/clusters, "allocs/cluster")
}
