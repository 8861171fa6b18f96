package detector

import (
	"errors"
	"regexp"
	"time"

	"k8s.io/client-go/tools/events"

	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// Defaults of Options.
const (
	// DefaultWorkers is Karmada's --concurrent-resource-template-syncs.
	DefaultWorkers = 5
	// DefaultDiscoveryPeriod is how often resource types are rediscovered
	// when no CustomResourceDefinition change says so earlier.
	DefaultDiscoveryPeriod = 30 * time.Second
)

// Options configure the detector.
type Options struct {
	// Interpreter interprets replicas and components of templates.
	// Required. A live chain (interpreter.New) is waited for until it has
	// synced before the first template is processed.
	Interpreter interpreter.Interpreter
	// Recorder records the template events. Default: the manager's.
	Recorder events.EventRecorder
	// SkippedAPIs are not propagated, in addition to the built-in skip list
	// (see ParseSkippedAPIs).
	SkippedAPIs *SkippedAPIs
	// SkippedNamespaces: objects in namespaces matching one of these are not
	// propagated (Karmada's --skipped-propagating-namespaces). Reserved
	// namespaces never are.
	SkippedNamespaces []*regexp.Regexp
	// Workers is the number of templates processed at once. Default:
	// DefaultWorkers.
	Workers int
	// ResyncPeriod, when positive, replays every template informer's cache
	// into the queue that often. No list is repeated; it only bounds how
	// long an unnoticed failure could last. Default: 0 (off).
	ResyncPeriod time.Duration
	// DiscoveryPeriod is how often resource types are rediscovered. Default:
	// DefaultDiscoveryPeriod.
	DiscoveryPeriod time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.Interpreter == nil {
		return o, errors.New("detector: Options.Interpreter is required")
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.DiscoveryPeriod <= 0 {
		o.DiscoveryPeriod = DefaultDiscoveryPeriod
	}
	if o.ResyncPeriod < 0 {
		o.ResyncPeriod = 0
	}
	if o.SkippedAPIs == nil {
		o.SkippedAPIs = &SkippedAPIs{}
	}
	return o, nil
}
