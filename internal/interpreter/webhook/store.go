// Package webhook asks interpreter webhooks registered with
// ResourceInterpreterWebhookConfigurations: the second layer of the
// interpreter chain. A request goes to the first webhook (by
// "<configuration>/<webhook>" name) with a rule matching the object's kind
// and the operation, as a ResourceInterpreterContext POSTed over HTTPS,
// bounded by the webhook's timeoutSeconds. A webhook that fails, times out
// or answers unsuccessfully makes the call fail; it never silently falls
// through to the next layer.
package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

// LayerName is the name of this layer in errors and logs.
const LayerName = "webhook"

// ServiceResolver turns a webhook's service reference into the URL to
// call. The default gives https://<name>.<namespace>.svc:<port><path>.
type ServiceResolver func(ref *admissionregistrationv1.ServiceReference) (*url.URL, error)

// Options configure a Store.
type Options struct {
	// ResolveService overrides how service references become URLs, e.g.
	// to reach the service through its cluster IP.
	ResolveService ServiceResolver
	// Transport wraps the transport built for each webhook (tests, proxies).
	Transport func(*http.Transport) http.RoundTripper
}

// hook is one webhook ready to call.
type hook struct {
	uid     string // "<configuration>/<webhook>"
	rules   []configv1alpha1.RuleWithOperations
	url     string
	timeout time.Duration
	client  *http.Client
	closer  *http.Transport
	err     error // why the webhook cannot be called (bad clientConfig)
}

// Store holds the registered webhooks.
type Store struct {
	opts Options

	mu      sync.Mutex
	configs map[string][]*hook

	hooks atomic.Pointer[[]*hook] // sorted by uid
	reg   atomic.Pointer[toolscache.ResourceEventHandlerRegistration]
}

// NewStore returns a store without webhooks.
func NewStore(opts Options) *Store {
	if opts.ResolveService == nil {
		opts.ResolveService = resolveServiceDNS
	}
	s := &Store{opts: opts, configs: map[string][]*hook{}}
	s.hooks.Store(&[]*hook{})
	return s
}

func resolveServiceDNS(ref *admissionregistrationv1.ServiceReference) (*url.URL, error) {
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	u := &url.URL{Scheme: "https", Host: fmt.Sprintf("%s.%s.svc:%d", ref.Name, ref.Namespace, port)}
	if ref.Path != nil {
		u.Path = *ref.Path
	}
	return u, nil
}

// Apply adds or replaces a configuration (by name).
func (s *Store) Apply(ctx context.Context, c *configv1alpha1.ResourceInterpreterWebhookConfiguration) {
	log := ctrl.LoggerFrom(ctx).WithValues("webhookConfiguration", c.Name)
	hooks := make([]*hook, 0, len(c.Webhooks))
	for i := range c.Webhooks {
		h := s.build(c.Name, &c.Webhooks[i])
		if h.err != nil {
			log.Error(h.err, "Interpreter webhook cannot be called; calls routed to it will fail", "webhook", h.uid)
		}
		hooks = append(hooks, h)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	closeHooks(s.configs[c.Name])
	s.configs[c.Name] = hooks
	s.publish()
}

// Delete removes a configuration.
func (s *Store) Delete(_ context.Context, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.configs[name]; !ok {
		return
	}
	closeHooks(s.configs[name])
	delete(s.configs, name)
	s.publish()
}

func closeHooks(hooks []*hook) {
	for _, h := range hooks {
		if h.closer != nil {
			h.closer.CloseIdleConnections()
		}
	}
}

func (s *Store) publish() {
	var all []*hook
	for _, hooks := range s.configs {
		all = append(all, hooks...)
	}
	slices.SortFunc(all, func(a, b *hook) int { return strings.Compare(a.uid, b.uid) })
	s.hooks.Store(&all)
}

func (s *Store) build(config string, w *configv1alpha1.ResourceInterpreterWebhook) *hook {
	h := &hook{uid: config + "/" + w.Name, rules: w.Rules}
	seconds := configv1alpha1.DefaultWebhookTimeoutSeconds
	if w.TimeoutSeconds != nil && *w.TimeoutSeconds > 0 {
		seconds = *w.TimeoutSeconds
	}
	h.timeout = time.Duration(seconds) * time.Second
	if !slices.Contains(w.InterpreterContextVersions, configv1alpha1.InterpreterContextVersion) {
		h.err = fmt.Errorf("webhook %s accepts ResourceInterpreterContext versions %v, none of which is %s",
			h.uid, w.InterpreterContextVersions, configv1alpha1.InterpreterContextVersion)
		return h
	}
	u, serverName, err := s.endpoint(&w.ClientConfig)
	if err != nil {
		h.err = fmt.Errorf("webhook %s: %w", h.uid, err)
		return h
	}
	h.url = u
	transport, err := newTransport(w.ClientConfig.CABundle, serverName)
	if err != nil {
		h.err = fmt.Errorf("webhook %s: %w", h.uid, err)
		return h
	}
	h.closer = transport
	var rt http.RoundTripper = transport
	if s.opts.Transport != nil {
		rt = s.opts.Transport(transport)
	}
	h.client = &http.Client{Transport: rt}
	return h
}

// endpoint returns the URL to call and the TLS server name to verify.
func (s *Store) endpoint(cc *admissionregistrationv1.WebhookClientConfig) (string, string, error) {
	switch {
	case cc.URL != nil && cc.Service != nil:
		return "", "", fmt.Errorf("clientConfig has both url and service")
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return "", "", fmt.Errorf("clientConfig.url: %w", err)
		}
		if u.Scheme != "https" {
			return "", "", fmt.Errorf("clientConfig.url %q is not https", *cc.URL)
		}
		return u.String(), "", nil
	case cc.Service != nil:
		u, err := s.opts.ResolveService(cc.Service)
		if err != nil {
			return "", "", fmt.Errorf("resolving service %s/%s: %w", cc.Service.Namespace, cc.Service.Name, err)
		}
		return u.String(), cc.Service.Name + "." + cc.Service.Namespace + ".svc", nil
	}
	return "", "", fmt.Errorf("clientConfig has neither url nor service")
}

// match returns the first webhook, by name, with a rule matching op on
// gvk.
func (s *Store) match(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) *hook {
	for _, h := range *s.hooks.Load() {
		for i := range h.rules {
			if ruleMatches(&h.rules[i], gvk, op) {
				return h
			}
		}
	}
	return nil
}

func ruleMatches(r *configv1alpha1.RuleWithOperations, gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return matchOne(r.Operations, op) &&
		matchOne(r.APIGroups, gvk.Group) &&
		matchOne(r.APIVersions, gvk.Version) &&
		matchOne(r.Kinds, gvk.Kind)
}

func matchOne[T ~string](patterns []T, value T) bool {
	for _, p := range patterns {
		if p == "*" || p == value {
			return true
		}
	}
	return false
}

// Informers gives informers by object type; a controller-runtime cache
// does.
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Watch keeps the store in step with the webhook configurations in the
// informer cache; HasSynced turns true once the initial list is in.
func (s *Store) Watch(ctx context.Context, informers Informers) error {
	inf, err := informers.GetInformer(ctx, &configv1alpha1.ResourceInterpreterWebhookConfiguration{})
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.applyObject(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.applyObject(ctx, obj) },
		DeleteFunc: func(obj any) { s.deleteObject(ctx, obj) },
	})
	if err != nil {
		return err
	}
	s.reg.Store(&reg)
	return nil
}

func (s *Store) applyObject(ctx context.Context, obj any) {
	if c, ok := obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration); ok {
		s.Apply(ctx, c)
	}
}

func (s *Store) deleteObject(ctx context.Context, obj any) {
	switch o := obj.(type) {
	case *configv1alpha1.ResourceInterpreterWebhookConfiguration:
		s.Delete(ctx, o.Name)
	case toolscache.DeletedFinalStateUnknown:
		if c, ok := o.Obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration); ok {
			s.Delete(ctx, c.Name)
		}
	}
}

// HasSynced tells whether the watched cache's initial list is in; a store
// that watches nothing is always synced.
func (s *Store) HasSynced() bool {
	reg := s.reg.Load()
	return reg == nil || (*reg).HasSynced()
}
