package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	customclient "k8s.io/metrics/pkg/client/custom_metrics"
	externalclient "k8s.io/metrics/pkg/client/external_metrics"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// Metrics reads what a FederatedHPA follows from the control plane, where
// the metrics adapter serves the members' metrics aggregated. The
// controller reads through this interface, not the clientsets, because a
// test's bare API server serves no metrics APIs: the envtest gives the
// controller values of its choosing, while the controller-manager runs
// RESTMetrics.
type Metrics interface {
	// Resource is each pod's use of resource (in a container of that name
	// when container is set), in thousandths.
	Resource(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetrics, time.Time, error)
	// Pods is each pod's value of a custom metric.
	Pods(ctx context.Context, metric, namespace string, selector, metricSelector labels.Selector) (PodMetrics, time.Time, error)
	// Object is an object's value of a custom metric.
	Object(ctx context.Context, metric, namespace string, object autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error)
	// External is the values of an external metric.
	External(ctx context.Context, metric, namespace string, selector labels.Selector) ([]int64, time.Time, error)
}

// metricWindow is the window of a custom metric sample that gives none,
// metrics-server's.
const metricWindow = time.Minute

// RESTMetrics reads the metrics.k8s.io, custom.metrics.k8s.io and
// external.metrics.k8s.io APIs of the control plane.
type RESTMetrics struct {
	resource resourceclient.PodMetricsesGetter
	custom   customclient.CustomMetricsClient
	external externalclient.ExternalMetricsClient
	versions customclient.AvailableAPIsGetter
}

// NewRESTMetrics builds the clients of the metrics APIs at cfg; mapper
// resolves the kinds custom metrics describe.
func NewRESTMetrics(cfg *rest.Config, mapper meta.RESTMapper) (*RESTMetrics, error) {
	res, err := resourceclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics.k8s.io client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	ext, err := externalclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("external.metrics.k8s.io client: %w", err)
	}
	versions := customclient.NewAvailableAPIsGetter(disc)
	return &RESTMetrics{resource: res, custom: customclient.NewForConfig(cfg, mapper, versions), external: ext, versions: versions}, nil
}

// Start forgets, every interval until ctx ends, which custom metrics
// version the control plane serves, so that an adapter installed or
// upgraded later is found.
func (m *RESTMetrics) Start(ctx context.Context) error {
	customclient.PeriodicallyInvalidate(m.versions, 5*time.Minute, ctx.Done())
	return nil
}

// NeedLeaderElection: discovery is cheap and harmless in every replica.
func (m *RESTMetrics) NeedLeaderElection() bool { return false }

func (m *RESTMetrics) Resource(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetrics, time.Time, error) {
	list, err := m.resource.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	out := make(PodMetrics, len(list.Items))
	for _, pm := range list.Items {
		key := PodKey{Cluster: pm.Annotations[autoscalingv1alpha1.QuerySourceAnnotation], Name: pm.Name}
		var sum int64
		complete, found := len(pm.Containers) > 0, false
		for _, c := range pm.Containers {
			if container != "" && c.Name != container {
				continue
			}
			found = true
			v, ok := c.Usage[resource]
			if !ok {
				complete = false
				break
			}
			sum += v.MilliValue()
		}
		if container != "" && !found {
			return nil, time.Time{}, fmt.Errorf("container %s not present in metrics for pod %s/%s", container, pm.Namespace, pm.Name)
		}
		if complete {
			out[key] = PodMetric{Value: sum, Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
		}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

func (m *RESTMetrics) Pods(_ context.Context, metric, namespace string, selector, metricSelector labels.Selector) (PodMetrics, time.Time, error) {
	list, err := m.custom.NamespacedMetrics(namespace).GetForObjects(schema.GroupKind{Kind: "Pod"}, selector, metric, metricSelector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from custom metrics API")
	}
	out := make(PodMetrics, len(list.Items))
	for _, v := range list.Items {
		window := metricWindow
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		out[PodKey{Name: v.DescribedObject.Name}] = PodMetric{Value: v.Value.MilliValue(), Timestamp: v.Timestamp.Time, Window: window}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

func (m *RESTMetrics) Object(_ context.Context, metric, namespace string, object autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	gk := schema.FromAPIVersionAndKind(object.APIVersion, object.Kind).GroupKind()
	var get func() (int64, time.Time, error)
	if gk == (schema.GroupKind{Kind: "Namespace"}) {
		// A namespace is described by the FederatedHPA's own: a reference
		// does not reach out of it.
		get = func() (int64, time.Time, error) {
			v, err := m.custom.RootScopedMetrics().GetForObject(gk, namespace, metric, metricSelector)
			if err != nil {
				return 0, time.Time{}, err
			}
			return v.Value.MilliValue(), v.Timestamp.Time, nil
		}
	} else {
		get = func() (int64, time.Time, error) {
			v, err := m.custom.NamespacedMetrics(namespace).GetForObject(gk, object.Name, metric, metricSelector)
			if err != nil {
				return 0, time.Time{}, err
			}
			return v.Value.MilliValue(), v.Timestamp.Time, nil
		}
	}
	v, ts, err := get()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return v, ts, nil
}

func (m *RESTMetrics) External(_ context.Context, metric, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	list, err := m.external.NamespacedMetrics(namespace).List(metric, selector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from external metrics API")
	}
	out := make([]int64, 0, len(list.Items))
	for _, v := range list.Items {
		out = append(out, v.Value.MilliValue())
	}
	return out, list.Items[0].Timestamp.Time, nil
}
