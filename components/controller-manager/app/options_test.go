package app

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) Options {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDefaults(t *testing.T) {
	o := parse(t)
	if o.leaderElect {
		t.Error("leader election is on by default")
	}
	if o.clusterStatusPeriod != 10*time.Second || o.clusterHealth.Period != 10*time.Second || o.clusterHealth.FailureThreshold != 3 {
		t.Errorf("defaults = %+v", o)
	}
	if skipped, err := o.validate(); err != nil || len(skipped) != 0 {
		t.Errorf("validate() = %v, %v", skipped, err)
	}
}

func TestValidate(t *testing.T) {
	o := parse(t, "--skipped-propagating-namespaces=istio-.*, ,team-[0-9]+")
	skipped, err := o.validate()
	if err != nil {
		t.Fatal(err)
	}
	matches := func(name string) bool {
		for _, re := range skipped {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
	for name, want := range map[string]bool{"istio-system": true, "my-istio-system": false, "team-7": true, "team-7b": false} {
		if got := matches(name); got != want {
			t.Errorf("skipped %q = %v, want %v", name, got, want)
		}
	}

	bad := parse(t, "--cluster-health-failure-threshold=0", "--skipped-propagating-namespaces=(")
	_, err = bad.validate()
	if err == nil || !strings.Contains(err.Error(), "cluster-health-failure-threshold") || !strings.Contains(err.Error(), "skipped-propagating-namespaces") {
		t.Errorf("validate() = %v, want both errors", err)
	}
}
