package custommetrics

import (
	"cmp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	cmclient "k8s.io/metrics/pkg/client/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// objectKey tells the described objects apart: the same key in two
// members is one object of the federation, as a propagated one is.
type objectKey struct {
	kind, apiVersion, namespace, name, metric, selector string
}

func keyOf(v custom_metrics.MetricValue) objectKey {
	var selector string
	if v.Metric.Selector != nil {
		selector = metav1.FormatLabelSelector(v.Metric.Selector)
	}
	return objectKey{v.DescribedObject.Kind, v.DescribedObject.APIVersion, v.DescribedObject.Namespace, v.DescribedObject.Name, v.Metric.Name, selector}
}

// sumByObject merges the members' answers (in member order): one value
// per described object and metric, the sum of the members' values; the
// timestamp is the newest and the window the first member's. The result is
// sorted by namespace, name and metric.
func sumByObject(answers [][]custom_metrics.MetricValue) []custom_metrics.MetricValue {
	index := map[objectKey]int{}
	var out []custom_metrics.MetricValue
	for _, items := range answers {
		for _, v := range items {
			k := keyOf(v)
			i, seen := index[k]
			if !seen {
				index[k] = len(out)
				out = append(out, *v.DeepCopy())
				continue
			}
			out[i].Value.Add(v.Value)
			if out[i].Timestamp.Before(&v.Timestamp) {
				out[i].Timestamp = v.Timestamp
			}
		}
	}
	slices.SortFunc(out, func(a, b custom_metrics.MetricValue) int {
		return cmp.Or(strings.Compare(a.DescribedObject.Namespace, b.DescribedObject.Namespace),
			strings.Compare(a.DescribedObject.Name, b.DescribedObject.Name),
			strings.Compare(a.DescribedObject.Kind, b.DescribedObject.Kind),
			strings.Compare(a.Metric.Name, b.Metric.Name))
	})
	return out
}

// newestServed is the first of the versions the client library knows,
// newest first, that the member serves.
func newestServed(served []string) (schema.GroupVersion, bool) {
	for _, gv := range cmclient.MetricVersions {
		if gv.Group == custom_metrics.GroupName && gv.Version != "" && slices.Contains(served, gv.Version) {
			return gv, true
		}
	}
	return schema.GroupVersion{}, false
}

// metricInfos reads the metrics out of a member's discovery: each resource
// is named <resource>[.<group>]/<metric>.
func metricInfos(resources []metav1.APIResource) []provider.CustomMetricInfo {
	var out []provider.CustomMetricInfo
	for _, r := range resources {
		gr, metric, ok := strings.Cut(r.Name, "/")
		if !ok || metric == "" {
			continue
		}
		out = append(out, provider.CustomMetricInfo{GroupResource: schema.ParseGroupResource(gr), Namespaced: r.Namespaced, Metric: metric})
	}
	return out
}

// unionInfos merges the members' metric lists without repeats, sorted.
func unionInfos(lists ...[]provider.CustomMetricInfo) []provider.CustomMetricInfo {
	seen := map[provider.CustomMetricInfo]bool{}
	var out []provider.CustomMetricInfo
	for _, list := range lists {
		for _, info := range list {
			if !seen[info] {
				seen[info] = true
				out = append(out, info)
			}
		}
	}
	slices.SortFunc(out, func(a, b provider.CustomMetricInfo) int {
		return cmp.Or(strings.Compare(a.GroupResource.String(), b.GroupResource.String()), strings.Compare(a.Metric, b.Metric),
			cmpBool(a.Namespaced, b.Namespaced))
	})
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
