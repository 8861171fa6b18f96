package detector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Name names the detector: its logger, its events' reporting controller and
// its field manager.
const Name = "resource-detector"

// Detector is the resource detector. Create it with SetupWithManager; the
// manager runs it (only while leading).
type Detector struct {
	opts   Options
	log    logr.Logger
	filter templateFilter

	// client reads policies and bindings through the manager's cache and
	// writes bindings; reader reads past the cache.
	client    client.Client
	reader    client.Reader
	cache     cache.Cache
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	metadata  metadata.Interface
	recorder  events.EventRecorder

	queue   workqueue.TypedRateLimitingInterface[templateKey]
	changes *changeTracker
	// created holds the bindings written moments ago that the cache may
	// not show yet.
	created   *createdBindings
	informers *templateInformers
	// rediscover asks for a discovery refresh now.
	rediscover chan struct{}
	// observe, when set (by tests, before Start), is told of every
	// reconcile: its key, when it started and how it ended.
	observe func(key templateKey, started time.Time, err error)
}

var (
	_ manager.Runnable               = (*Detector)(nil)
	_ manager.LeaderElectionRunnable = (*Detector)(nil)
)

// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers.
// +kubebuilder:rbac:groups=*,resources=*/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=policy.karmada.io,resources=overridepolicies;clusteroverridepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager creates the detector, registers the controllers giving
// policies their permanent ids and adds the detector to mgr. The manager's
// scheme must know the policy.karmada.io/v1alpha1 and
// work.karmada.io/v1alpha2 types.
func SetupWithManager(mgr ctrl.Manager, opts Options) (*Detector, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	scheme := mgr.GetScheme()
	for _, obj := range []runtime.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}, &workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if _, _, err := scheme.ObjectKinds(obj); err != nil {
			return nil, fmt.Errorf("detector: the manager's scheme lacks %T: %w", obj, err)
		}
	}
	cfg, httpClient := mgr.GetConfig(), mgr.GetHTTPClient()
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("detector: dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("detector: discovery client: %w", err)
	}
	meta, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("detector: metadata client: %w", err)
	}
	if opts.Recorder == nil {
		opts.Recorder = mgr.GetEventRecorder(Name)
	}
	d := &Detector{
		opts:       opts,
		log:        mgr.GetLogger().WithName(Name),
		filter:     templateFilter{skippedNamespaces: opts.SkippedNamespaces},
		client:     mgr.GetClient(),
		reader:     mgr.GetAPIReader(),
		cache:      mgr.GetCache(),
		dynamic:    dyn,
		discovery:  disc,
		metadata:   meta,
		recorder:   opts.Recorder,
		queue:      newQueue(),
		changes:    newChangeTracker(),
		created:    newCreatedBindings(),
		informers:  newTemplateInformers(),
		rediscover: make(chan struct{}, 1),
	}
	if err := setupPolicyIDControllers(mgr); err != nil {
		return nil, err
	}
	if err := mgr.Add(d); err != nil {
		return nil, fmt.Errorf("detector: adding to the manager: %w", err)
	}
	return d, nil
}

// NeedLeaderElection is true: one detector writes claims and bindings.
func (d *Detector) NeedLeaderElection() bool { return true }

// syncWaiter is implemented by interpreters fed from the API server.
type syncWaiter interface {
	WaitForSync(ctx context.Context) error
}

// Start runs the detector until ctx is done.
func (d *Detector) Start(ctx context.Context) error {
	ctx = logr.NewContext(ctx, d.log)
	if w, ok := d.opts.Interpreter.(syncWaiter); ok {
		d.log.Info("Waiting for the resource interpreter's configuration")
		if err := w.WaitForSync(ctx); err != nil {
			return fmt.Errorf("detector: %w", err)
		}
	}
	// Policies must be known before any template is processed: a claim by
	// a policy missing from the cache would be released.
	for _, obj := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		informer, err := d.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("detector: policy informer: %w", err)
		}
		reg, err := informer.AddEventHandler(d.policyHandler())
		if err != nil {
			return fmt.Errorf("detector: policy event handler: %w", err)
		}
		defer func() { _ = informer.RemoveEventHandler(reg) }()
	}
	// Bindings are read through the cache; start their informers now rather
	// than in the first workers.
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if _, err := d.cache.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("detector: binding informer: %w", err)
		}
	}
	if err := d.watchCRDs(ctx); err != nil {
		return err
	}
	if err := d.refreshResources(ctx); err != nil {
		// Partial discovery is handled inside; this is the API server not
		// answering. The loop below retries.
		d.log.Error(err, "Discovering resource types")
	}

	var wg sync.WaitGroup
	wg.Go(func() { d.discoveryLoop(ctx) })
	for range d.opts.Workers {
		wg.Go(func() {
			for d.processNext(ctx) {
			}
		})
	}
	d.log.Info("Started", "workers", d.opts.Workers)
	<-ctx.Done()
	d.queue.ShutDown()
	wg.Wait()
	d.informers.stopAll()
	return nil
}

func (d *Detector) processNext(ctx context.Context) bool {
	key, quit := d.queue.Get()
	if quit {
		return false
	}
	defer d.queue.Done(key)
	started := time.Now()
	err := d.reconcile(ctx, key)
	if d.observe != nil {
		d.observe(key, started, err)
	}
	if err != nil {
		switch {
		case errors.Is(err, errWaiting):
			d.log.V(1).Info("Template waits", "template", key.String(), "reason", err.Error())
		case !errors.Is(err, context.Canceled):
			d.log.Error(err, "Reconciling template", "template", key.String())
		}
		d.queue.AddRateLimited(key)
		return true
	}
	d.queue.Forget(key)
	return true
}
