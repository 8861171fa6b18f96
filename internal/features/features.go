// Package features is the feature gates of Flotilla's components, with
// Karmada's names and defaults, so that a Karmada user's --feature-gates
// carries over. Only gates whose feature exists here are known: naming any
// other is an error, not a silent no-op.
package features

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"k8s.io/component-base/featuregate"
)

// Karmada's gates.
const (
	// Failover enables cluster failover: the ClusterTaintPolicy controller
	// and, with --enable-no-execute-taint-eviction, the eviction of
	// workloads from clusters tainted NoExecute.
	Failover featuregate.Feature = "Failover"
	// GracefulEviction keeps a workload's copy in the cluster it is evicted
	// from until its replacement is healthy or a grace period ends.
	GracefulEviction featuregate.Feature = "GracefulEviction"
	// StatefulFailoverInjection carries the state that
	// failover.cluster.statePreservation names from the evicted copy into
	// the labels of its replacement.
	StatefulFailoverInjection featuregate.Feature = "StatefulFailoverInjection"
	// FederatedQuotaEnforcement enforces FederatedResourceQuotas on the
	// control plane: their usage is computed from the namespace's
	// ResourceBindings and a binding that would exceed one is refused.
	FederatedQuotaEnforcement featuregate.Feature = "FederatedQuotaEnforcement"
)

var defaults = map[featuregate.Feature]featuregate.FeatureSpec{
	Failover:                  {Default: false, PreRelease: featuregate.Beta},
	GracefulEviction:          {Default: true, PreRelease: featuregate.Beta},
	StatefulFailoverInjection: {Default: false, PreRelease: featuregate.Alpha},
	FederatedQuotaEnforcement: {Default: false, PreRelease: featuregate.Alpha},
}

// Gates is one component's set of feature gates. Each component instance
// has its own, unlike Karmada's process-wide gate: several run in one
// process (the local federation, the tests), each with its flags.
type Gates struct {
	featuregate.MutableFeatureGate
}

// New returns the gates at their defaults.
func New() *Gates {
	g := featuregate.NewFeatureGate()
	if err := g.Add(defaults); err != nil {
		// The table above is fixed: adding it to a new gate cannot fail.
		panic(fmt.Sprintf("registering feature gates: %v", err))
	}
	return &Gates{MutableFeatureGate: g}
}

// String is the flag value: the gates set from the command line.
func (g *Gates) String() string {
	if s, ok := g.MutableFeatureGate.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
}

// BindFlag registers --feature-gates on fs.
func (g *Gates) BindFlag(fs *flag.FlagSet) {
	fs.Var(g, "feature-gates", "A set of key=value pairs that describe feature gates, as Karmada's. Options are:\n"+
		strings.Join(g.KnownFeatures(), "\n"))
}

// Known splits gates into those Flotilla's components know, to pass on,
// and the names of the others, sorted, to report: a resource written for
// Karmada may name gates (PropagateDeps, ...) of behaviour that is always
// on here or not built yet, and passing them would stop the binary.
func Known(gates map[string]bool) (known map[string]bool, unknown []string) {
	for name, on := range gates {
		// A fresh set each time: one that refused a name refuses the
		// next ones too.
		if err := New().SetFromMap(map[string]bool{name: on}); err != nil {
			unknown = append(unknown, name)
			continue
		}
		if known == nil {
			known = map[string]bool{}
		}
		known[name] = on
	}
	slices.Sort(unknown)
	return known, unknown
}
