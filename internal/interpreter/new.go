package interpreter

import (
	"context"
	"fmt"
	"io/fs"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/customization"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/interpreter/webhook"
	"github.com/flotilla-io/flotilla/lua"
	"github.com/flotilla-io/flotilla/lua/customizations"
)

// Informers gives informers by object type; a controller-runtime cache
// (manager.GetCache()) does.
type Informers = customization.Informers

// Options configure the standard chain built by New.
type Options struct {
	// VM runs the Lua rules. Nil makes one with the default limits (1 s per
	// call); the caller then need not close it.
	VM *lua.VM
	// Informers, when set, feed ResourceInterpreterCustomizations and
	// ResourceInterpreterWebhookConfigurations live from the API server
	// (the cache must know the config.karmada.io scheme). Without them the
	// chain has no user customizations and no webhooks.
	Informers Informers
	// Bundled is the tree of bundled customizations; nil means the ones
	// embedded in the binary.
	Bundled fs.FS
	// Webhook configures how webhooks are reached.
	Webhook webhook.Options
}

// New builds the standard chain: customizations → webhooks → bundled Lua
// → native rules. With Informers it registers its event handlers; call
// WaitForSync before relying on answers (calls fail with ErrNotReady until
// the caches have synced).
func New(ctx context.Context, opts Options) (*Chain, error) {
	vm := opts.VM
	if vm == nil {
		vm = lua.New()
	}
	bundledFS := opts.Bundled
	if bundledFS == nil {
		bundledFS = customizations.FS()
	}
	ric := customization.NewStore(vm)
	hooks := webhook.NewStore(opts.Webhook)
	if opts.Informers != nil {
		if err := ric.Watch(ctx, opts.Informers); err != nil {
			return nil, fmt.Errorf("watching ResourceInterpreterCustomizations: %w", err)
		}
		if err := hooks.Watch(ctx, opts.Informers); err != nil {
			return nil, fmt.Errorf("watching ResourceInterpreterWebhookConfigurations: %w", err)
		}
	}
	third, err := bundled.New(bundledFS, vm)
	if err != nil {
		return nil, err
	}
	return NewChain(ric, hooks, third, native.New()), nil
}

// NewStatic builds the chain of the bundled customizations and native
// rules only, for tools that work without an API server.
func NewStatic(vm *lua.VM, bundledFS fs.FS) (*Chain, error) {
	if bundledFS == nil {
		bundledFS = customizations.FS()
	}
	third, err := bundled.New(bundledFS, vm)
	if err != nil {
		return nil, err
	}
	return NewChain(third, native.New()), nil
}

// WaitForSync blocks until every watched layer has loaded its
// configuration, or ctx ends.
func (c *Chain) WaitForSync(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
		return fmt.Errorf("waiting for interpreter configuration: %w", ErrNotReady)
	}
	return nil
}
