package features_test

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/internal/features"
)

func TestDefaultsAndFlag(t *testing.T) {
	g := features.New()
	if g.Enabled(features.Failover) || !g.Enabled(features.GracefulEviction) || g.Enabled(features.StatefulFailoverInjection) {
		t.Errorf("defaults: Failover %v GracefulEviction %v StatefulFailoverInjection %v; want Karmada's false, true, false",
			g.Enabled(features.Failover), g.Enabled(features.GracefulEviction), g.Enabled(features.StatefulFailoverInjection))
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	g.BindFlag(fs)
	if err := fs.Parse([]string{"--feature-gates=Failover=true,GracefulEviction=false"}); err != nil {
		t.Fatal(err)
	}
	if !g.Enabled(features.Failover) || g.Enabled(features.GracefulEviction) {
		t.Error("--feature-gates not applied")
	}
	if g.Enabled(features.FederatedQuotaEnforcement) {
		t.Error("FederatedQuotaEnforcement is on by default; Karmada's is off")
	}
	// Each instance has its own gates.
	if features.New().Enabled(features.Failover) {
		t.Error("a new gate set shares another's settings")
	}

	bad := features.New()
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	bad.BindFlag(fs)
	err := fs.Parse([]string{"--feature-gates=PropagateDeps=true"})
	if err == nil || !strings.Contains(err.Error(), "PropagateDeps") {
		t.Errorf("an unknown gate: %v, want an error naming it", err)
	}
}

func TestKnown(t *testing.T) {
	known, unknown := features.Known(map[string]bool{"Failover": true, "PropagateDeps": true, "GracefulEviction": false, "MultiClusterService": true})
	if len(known) != 2 || !known["Failover"] || known["GracefulEviction"] {
		t.Errorf("known %v", known)
	}
	if !slices.Equal(unknown, []string{"MultiClusterService", "PropagateDeps"}) {
		t.Errorf("unknown %v", unknown)
	}
	if known, unknown := features.Known(nil); known != nil || unknown != nil {
		t.Errorf("nothing: %v %v", known, unknown)
	}
}
