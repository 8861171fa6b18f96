package resourcemetrics

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/metrics"
)

// QueryFromClusterAnnotation names, on each item served, the member it was
// read from; Karmada's name.
const QueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster"

// Resources of the group, for errors.
var (
	podMetricsResource  = metrics.Resource("pods")
	nodeMetricsResource = metrics.Resource("nodes")
)

// memberItems is what one member answered.
type memberItems[T any] struct {
	cluster string
	items   []T
}

// mergePods concatenates the members' pod metrics, marks each with its
// member and sorts them by namespace, name and member, so that answers
// are stable whatever order the members replied in.
func mergePods(answers []memberItems[metrics.PodMetrics]) []metrics.PodMetrics {
	var out []metrics.PodMetrics
	for _, a := range answers {
		for _, item := range a.items {
			item.ObjectMeta = markedMeta(item.ObjectMeta, a.cluster)
			out = append(out, item)
		}
	}
	slices.SortFunc(out, func(a, b metrics.PodMetrics) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name),
			strings.Compare(clusterOf(a.ObjectMeta), clusterOf(b.ObjectMeta)))
	})
	return out
}

// mergeNodes is mergePods for nodes.
func mergeNodes(answers []memberItems[metrics.NodeMetrics]) []metrics.NodeMetrics {
	var out []metrics.NodeMetrics
	for _, a := range answers {
		for _, item := range a.items {
			item.ObjectMeta = markedMeta(item.ObjectMeta, a.cluster)
			out = append(out, item)
		}
	}
	slices.SortFunc(out, func(a, b metrics.NodeMetrics) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(clusterOf(a.ObjectMeta), clusterOf(b.ObjectMeta)))
	})
	return out
}

// markedMeta is a copy of meta annotated with the member it came from; the
// member's own answer is left alone.
func markedMeta(meta metav1.ObjectMeta, cluster string) metav1.ObjectMeta {
	out := *meta.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[QueryFromClusterAnnotation] = cluster
	return out
}

func clusterOf(meta metav1.ObjectMeta) string { return meta.Annotations[QueryFromClusterAnnotation] }

// single is the answer to a get by name, given the merged items the
// members had under that name: NotFound when none did, Conflict when
// several did (a name is not enough to tell them apart; a list shows them
// all).
func single[T any](gr schema.GroupResource, name string, merged []T, meta func(T) metav1.ObjectMeta) (T, error) {
	var zero T
	switch len(merged) {
	case 0:
		return zero, apierrors.NewNotFound(gr, name)
	case 1:
		return merged[0], nil
	}
	clusters := make([]string, 0, len(merged))
	for _, m := range merged {
		clusters = append(clusters, clusterOf(meta(m)))
	}
	return zero, apierrors.NewConflict(gr, name, fmt.Errorf("found in more than one member cluster (%s); a list with fieldSelector=metadata.name=%s shows each", strings.Join(clusters, ", "), name))
}
