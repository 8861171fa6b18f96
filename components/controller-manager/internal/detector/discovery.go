package detector

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// rediscoverDelay lets the API server publish a new CRD's type in discovery
// (and a burst of CRDs settle) before discovery is asked.
const rediscoverDelay = time.Second

// watchCRDs asks for a rediscovery whenever a CustomResourceDefinition
// changes, so new types are watched without waiting for the period. Only
// metadata is cached; a CRD's schema can be large.
func (d *Detector) watchCRDs(ctx context.Context) error {
	informer := metadatainformer.NewFilteredMetadataInformer(d.metadata, crdGVR, metav1.NamespaceAll, 0, toolscache.Indexers{}, nil).Informer()
	poke := func() {
		select {
		case d.rediscover <- struct{}{}:
		default:
		}
	}
	_, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	})
	if err != nil {
		return fmt.Errorf("detector: CRD event handler: %w", err)
	}
	go informer.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("detector: waiting for the CRD informer: %w", ctx.Err())
	}
	return nil
}

// discoveryLoop refreshes the watched types every period, and soon after a
// CRD changes.
func (d *Detector) discoveryLoop(ctx context.Context) {
	ticker := time.NewTicker(d.opts.DiscoveryPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-d.rediscover:
			select {
			case <-ctx.Done():
				return
			case <-time.After(rediscoverDelay):
			}
		}
		if err := d.refreshResources(ctx); err != nil && ctx.Err() == nil {
			d.log.Error(err, "Discovering resource types")
		}
	}
}

// refreshResources makes the running informers match the types discovery
// lists. Types of group versions whose discovery failed keep their
// informers until discovery answers for them again.
func (d *Detector) refreshResources(ctx context.Context) error {
	lists, err := discovery.ServerPreferredResources(d.discovery)
	failed := map[schema.GroupVersion]bool{}
	if err != nil {
		var partial *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &partial) {
			return fmt.Errorf("listing preferred resources: %w", err)
		}
		for gv := range partial.Groups {
			failed[gv] = true
		}
		d.log.Info("Discovery failed for some group versions; their types are kept as they are", "error", err.Error())
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	started, stopped := d.informers.sync(watchable(lists, d.opts.SkippedAPIs), failed, func(r resourceType) *templateInformer {
		return d.startInformer(ctx, r)
	})
	for _, r := range started {
		d.log.V(1).Info("Watching resource type", "resource", r.GVR.String())
	}
	for _, r := range stopped {
		d.log.Info("Stopped watching resource type", "resource", r.GVR.String())
	}
	return nil
}
