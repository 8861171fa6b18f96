// Package custommetrics serves custom.metrics.k8s.io (v1beta2 and v1beta1,
// through sigs.k8s.io/custom-metrics-apiserver) in the control plane by
// asking every Ready member's own custom.metrics.k8s.io, in the newest
// version it serves, and merging the answers as karmada-metrics-adapter
// does: the values of one object found in several members are added up.
package custommetrics

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	cmv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	cmclient "k8s.io/metrics/pkg/client/custom_metrics"
	cmscheme "k8s.io/metrics/pkg/client/custom_metrics/scheme"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/flotilla-io/flotilla/components/metrics-adapter/internal/members"
	"github.com/flotilla-io/flotilla/internal/membercluster"
)

// Provider is a provider.CustomMetricsProvider over the members.
type Provider struct {
	members   members.Lister
	converter *cmclient.MetricConverter
	// ctx is for ListAllMetrics, which the library calls without one.
	ctx context.Context
}

var _ provider.CustomMetricsProvider = &Provider{}

// NewProvider asks the members lister returns; ctx bounds the discovery
// that ListAllMetrics does.
func NewProvider(ctx context.Context, lister members.Lister) *Provider {
	return &Provider{members: lister, converter: cmclient.NewMetricConverter(), ctx: ctx}
}

// GetMetricByName sums the metric of the named object over the members
// that have it.
func (p *Provider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	answers, err := p.each(ctx, func(ctx context.Context, m *membercluster.Clients, version schema.GroupVersion) ([]custom_metrics.MetricValue, error) {
		return p.query(ctx, m, version, info, name.Namespace, name.Name, nil, metricSelector)
	})
	if err != nil {
		return nil, err
	}
	merged := sumByObject(answers)
	if len(merged) == 0 {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	return &merged[0], nil
}

// GetMetricBySelector returns the metric of every selected object, summed
// per object over the members.
func (p *Provider) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	answers, err := p.each(ctx, func(ctx context.Context, m *membercluster.Clients, version schema.GroupVersion) ([]custom_metrics.MetricValue, error) {
		return p.query(ctx, m, version, info, namespace, cmv1beta2.AllObjects, selector, metricSelector)
	})
	if err != nil {
		return nil, err
	}
	merged := sumByObject(answers)
	if len(merged) == 0 {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	return &custom_metrics.MetricValueList{Items: merged}, nil
}

// ListAllMetrics is the union of the metrics the members list.
func (p *Provider) ListAllMetrics() []provider.CustomMetricInfo {
	ctx := p.ctx
	ready, err := p.members.Ready(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing custom metrics")
		return nil
	}
	lists := make([][]provider.CustomMetricInfo, len(ready))
	var wg sync.WaitGroup
	for i, m := range ready {
		wg.Go(func() {
			version, ok, err := preferredVersion(m)
			if err != nil {
				log.FromContext(ctx).Error(err, "Discovering custom metrics of a member", "cluster", m.ClusterName)
			}
			if !ok {
				return
			}
			resources, err := m.Discovery.ServerResourcesForGroupVersion(version.String())
			if err != nil {
				log.FromContext(ctx).Error(err, "Discovering custom metrics of a member", "cluster", m.ClusterName)
				return
			}
			lists[i] = metricInfos(resources.APIResources)
		})
	}
	wg.Wait()
	return unionInfos(lists...)
}

// askFunc reads a metric from one member in the given version.
type askFunc func(context.Context, *membercluster.Clients, schema.GroupVersion) ([]custom_metrics.MetricValue, error)

// each asks every Ready member serving custom.metrics.k8s.io in parallel.
// Members that fail are logged and left out; members that lack the metric
// or the API are left out quietly.
func (p *Provider) each(ctx context.Context, ask askFunc) ([][]custom_metrics.MetricValue, error) {
	ready, err := p.members.Ready(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	answers := make([][]custom_metrics.MetricValue, len(ready))
	var wg sync.WaitGroup
	for i, m := range ready {
		wg.Go(func() {
			version, ok, err := preferredVersion(m)
			if err != nil {
				log.FromContext(ctx).Error(err, "Discovering custom metrics of a member", "cluster", m.ClusterName)
			}
			if !ok {
				return
			}
			items, err := ask(ctx, m, version)
			if err != nil {
				if !apierrors.IsNotFound(err) {
					log.FromContext(ctx).Error(err, "Reading custom metrics from a member", "cluster", m.ClusterName)
				}
				return
			}
			answers[i] = items
		})
	}
	wg.Wait()
	return answers, nil
}

// preferredVersion is the newest custom.metrics.k8s.io version the member
// serves; ok is false when it serves none.
func preferredVersion(m *membercluster.Clients) (schema.GroupVersion, bool, error) {
	groups, err := m.Discovery.ServerGroups()
	if err != nil {
		return schema.GroupVersion{}, false, fmt.Errorf("listing API groups of %s: %w", m.ClusterName, err)
	}
	for _, g := range groups.Groups {
		if g.Name != custom_metrics.GroupName {
			continue
		}
		var served []string
		for _, v := range g.Versions {
			served = append(served, v.Version)
		}
		if gv, ok := newestServed(served); ok {
			return gv, true, nil
		}
	}
	return schema.GroupVersion{}, false, nil
}

// query reads one metric of one object (name) or of the objects selector
// picks (name is "*") from a member.
func (p *Provider) query(ctx context.Context, m *membercluster.Clients, version schema.GroupVersion, info provider.CustomMetricInfo,
	namespace, name string, selector, metricSelector labels.Selector) ([]custom_metrics.MetricValue, error) {
	opts := &custom_metrics.MetricListOptions{}
	if selector != nil {
		opts.LabelSelector = selector.String()
	}
	if metricSelector != nil {
		opts.MetricLabelSelector = metricSelector.String()
	}
	params, err := p.converter.ConvertListOptionsToVersion(opts, version)
	if err != nil {
		return nil, fmt.Errorf("converting options to %s: %w", version, err)
	}
	req := m.Discovery.RESTClient().Get().Prefix("/apis/" + version.String())
	if info.GroupResource == (schema.GroupResource{Resource: "namespaces"}) {
		// A namespace's own metrics live at /namespaces/<name>/metrics/<metric>.
		req = req.Namespace(name).Resource("metrics").Name(info.Metric)
	} else {
		if info.Namespaced {
			req = req.Namespace(namespace)
		}
		req = req.Resource(info.GroupResource.String()).Name(name).SubResource(info.Metric)
	}
	result := req.SpecificallyVersionedParams(params, cmscheme.ParameterCodec, version).Do(ctx)
	obj, err := p.converter.ConvertResultToVersion(result, custom_metrics.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*custom_metrics.MetricValueList)
	if !ok {
		return nil, fmt.Errorf("%s answered %T, not a MetricValueList", m.ClusterName, obj)
	}
	return list.Items, nil
}
