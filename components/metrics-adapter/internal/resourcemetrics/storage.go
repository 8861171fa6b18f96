package resourcemetrics

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/metrics/pkg/apis/metrics"
	metricsinstall "k8s.io/metrics/pkg/apis/metrics/install"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/members"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// NewScheme knows metrics.k8s.io, internal and v1beta1.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	metricsinstall.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return scheme
}

// Install serves metrics.k8s.io/v1beta1 pods and nodes from the members
// that lister returns; scheme is NewScheme's.
func Install(server *genericapiserver.GenericAPIServer, scheme *runtime.Scheme, lister members.Lister) error {
	codecs := serializer.NewCodecFactory(scheme)
	q := &querier{members: lister, scheme: scheme}
	group := genericapiserver.NewDefaultAPIGroupInfo(metrics.GroupName, scheme, metav1.ParameterCodec, codecs)
	group.VersionedResourcesStorageMap[metricsv1beta1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"pods":  &podStorage{q: q},
		"nodes": &nodeStorage{q: q},
	}
	if err := server.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("installing %s: %w", metricsv1beta1.SchemeGroupVersion, err)
	}
	return nil
}

// querier asks every Ready member at once.
type querier struct {
	members members.Lister
	scheme  *runtime.Scheme
}

// each runs ask against every Ready member in parallel and returns the
// answers of those that answered. A member that fails is logged and left
// out, as one member down must not hide the others' metrics; a member
// without metrics.k8s.io (NotFound) is left out quietly.
func each[T any](ctx context.Context, q *querier, ask func(context.Context, metricsclient.Interface) ([]T, error)) ([]memberItems[T], error) {
	ready, err := q.members.Ready(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	answers := make([]memberItems[T], len(ready))
	var wg sync.WaitGroup
	for i, m := range ready {
		wg.Go(func() {
			items, err := askMember(ctx, m, ask)
			if err != nil {
				if !apierrors.IsNotFound(err) {
					log.FromContext(ctx).Error(err, "Reading resource metrics from a member", "cluster", m.ClusterName)
				}
				return
			}
			answers[i] = memberItems[T]{cluster: m.ClusterName, items: items}
		})
	}
	wg.Wait()
	return answers, nil
}

func askMember[T any](ctx context.Context, m *membercluster.Clients, ask func(context.Context, metricsclient.Interface) ([]T, error)) ([]T, error) {
	mc, err := metricsclient.NewForConfigAndClient(m.Config, m.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("metrics client of %s: %w", m.ClusterName, err)
	}
	return ask(ctx, mc)
}

// listOptions carries a request's selectors to the members, which apply
// them as metrics-server does.
func listOptions(opts *metainternalversion.ListOptions) metav1.ListOptions {
	var out metav1.ListOptions
	if opts == nil {
		return out
	}
	if opts.LabelSelector != nil {
		out.LabelSelector = opts.LabelSelector.String()
	}
	if opts.FieldSelector != nil {
		out.FieldSelector = opts.FieldSelector.String()
	}
	return out
}

// byName is a list narrowed to one name: a get of a name the member does
// not have is a NotFound there, which each would leave out anyway, but a
// list says so without an error in the member's log.
func byName(name string) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
}

func (q *querier) pods(ctx context.Context, namespace string, opts metav1.ListOptions) ([]metrics.PodMetrics, error) {
	answers, err := each(ctx, q, func(ctx context.Context, mc metricsclient.Interface) ([]metrics.PodMetrics, error) {
		list, err := mc.MetricsV1beta1().PodMetricses(namespace).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		var internal metrics.PodMetricsList
		if err := q.scheme.Convert(list, &internal, nil); err != nil {
			return nil, fmt.Errorf("converting pod metrics: %w", err)
		}
		return internal.Items, nil
	})
	if err != nil {
		return nil, err
	}
	return mergePods(answers), nil
}

func (q *querier) nodes(ctx context.Context, opts metav1.ListOptions) ([]metrics.NodeMetrics, error) {
	answers, err := each(ctx, q, func(ctx context.Context, mc metricsclient.Interface) ([]metrics.NodeMetrics, error) {
		list, err := mc.MetricsV1beta1().NodeMetricses().List(ctx, opts)
		if err != nil {
			return nil, err
		}
		var internal metrics.NodeMetricsList
		if err := q.scheme.Convert(list, &internal, nil); err != nil {
			return nil, fmt.Errorf("converting node metrics: %w", err)
		}
		return internal.Items, nil
	})
	if err != nil {
		return nil, err
	}
	return mergeNodes(answers), nil
}

// podStorage serves PodMetrics.
type podStorage struct{ q *querier }

var (
	_ rest.Storage              = &podStorage{}
	_ rest.KindProvider         = &podStorage{}
	_ rest.Scoper               = &podStorage{}
	_ rest.Getter               = &podStorage{}
	_ rest.Lister               = &podStorage{}
	_ rest.TableConvertor       = &podStorage{}
	_ rest.SingularNameProvider = &podStorage{}
)

func (s *podStorage) New() runtime.Object     { return &metrics.PodMetrics{} }
func (s *podStorage) NewList() runtime.Object { return &metrics.PodMetricsList{} }
func (s *podStorage) Destroy()                {}
func (s *podStorage) Kind() string            { return "PodMetrics" }
func (s *podStorage) NamespaceScoped() bool   { return true }
func (s *podStorage) GetSingularName() string { return "pod" }

func (s *podStorage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	items, err := s.q.pods(ctx, genericapirequest.NamespaceValue(ctx), listOptions(opts))
	if err != nil {
		return nil, err
	}
	return &metrics.PodMetricsList{Items: items}, nil
}

func (s *podStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	items, err := s.q.pods(ctx, genericapirequest.NamespaceValue(ctx), byName(name))
	if err != nil {
		return nil, err
	}
	item, err := single(podMetricsResource, name, items, func(p metrics.PodMetrics) metav1.ObjectMeta { return p.ObjectMeta })
	if err != nil {
		return nil, err
	}
	return &item, nil
}

func (s *podStorage) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	switch o := object.(type) {
	case *metrics.PodMetrics:
		return podTable(*o), nil
	case *metrics.PodMetricsList:
		return podTable(o.Items...), nil
	}
	return nil, fmt.Errorf("cannot show %T as a table of pod metrics", object)
}

// nodeStorage serves NodeMetrics.
type nodeStorage struct{ q *querier }

var (
	_ rest.Storage              = &nodeStorage{}
	_ rest.KindProvider         = &nodeStorage{}
	_ rest.Scoper               = &nodeStorage{}
	_ rest.Getter               = &nodeStorage{}
	_ rest.Lister               = &nodeStorage{}
	_ rest.TableConvertor       = &nodeStorage{}
	_ rest.SingularNameProvider = &nodeStorage{}
)

func (s *nodeStorage) New() runtime.Object     { return &metrics.NodeMetrics{} }
func (s *nodeStorage) NewList() runtime.Object { return &metrics.NodeMetricsList{} }
func (s *nodeStorage) Destroy()                {}
func (s *nodeStorage) Kind() string            { return "NodeMetrics" }
func (s *nodeStorage) NamespaceScoped() bool   { return false }
func (s *nodeStorage) GetSingularName() string { return "node" }

func (s *nodeStorage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	items, err := s.q.nodes(ctx, listOptions(opts))
	if err != nil {
		return nil, err
	}
	return &metrics.NodeMetricsList{Items: items}, nil
}

func (s *nodeStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	items, err := s.q.nodes(ctx, byName(name))
	if err != nil {
		return nil, err
	}
	item, err := single(nodeMetricsResource, name, items, func(n metrics.NodeMetrics) metav1.ObjectMeta { return n.ObjectMeta })
	if err != nil {
		return nil, err
	}
	return &item, nil
}

func (s *nodeStorage) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	switch o := object.(type) {
	case *metrics.NodeMetrics:
		return nodeTable(*o), nil
	case *metrics.NodeMetricsList:
		return nodeTable(o.Items...), nil
	}
	return nil, fmt.Errorf("cannot show %T as a table of node metrics", object)
}
