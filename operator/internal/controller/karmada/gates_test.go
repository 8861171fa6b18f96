package karmada

import (
	"maps"
	"slices"
	"testing"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
)

// TestFeatureGates: the controller-manager gets the gates it has, from
// spec.featureGates with its own on top; the rest (Karmada's gates of
// behaviour always on here, the scheduler's) are reported, not passed to a
// binary that would refuse them.
func TestFeatureGates(t *testing.T) {
	k := &operatorv1alpha1.Karmada{}
	k.Spec.FeatureGates = map[string]bool{"Failover": true, "PropagateDeps": true, "GracefulEviction": true}
	k.Spec.Components = &operatorv1alpha1.KarmadaComponents{
		KarmadaControllerManager: &operatorv1alpha1.KarmadaControllerManager{FeatureGates: map[string]bool{"GracefulEviction": false, "CustomizedClusterResourceModeling": true}},
		KarmadaScheduler:         &operatorv1alpha1.KarmadaScheduler{FeatureGates: map[string]bool{"PriorityBasedScheduling": true}},
	}
	v, err := chartValues(k, &inputs{domain: "cluster.local"}, ControllerManager)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v["featureGates"].(map[string]any)
	want := map[string]any{"Failover": true, "GracefulEviction": false}
	if !maps.Equal(got, want) {
		t.Errorf("controller-manager featureGates %v, want %v", got, want)
	}
	if v, err := chartValues(k, &inputs{domain: "cluster.local"}, Scheduler); err != nil || v["featureGates"] != nil {
		t.Errorf("scheduler featureGates %v (%v), want none", v["featureGates"], err)
	}
	wantUnsupported := []string{
		"spec.featureGates.PropagateDeps (no Flotilla component has this gate)",
		"spec.components.karmadaControllerManager.featureGates.CustomizedClusterResourceModeling (Flotilla's controller-manager has no such gate)",
		"spec.components.karmadaScheduler.featureGates.PriorityBasedScheduling (Flotilla's scheduler has no feature gates)",
	}
	if got := unsupported(k); !slices.Equal(got, wantUnsupported) {
		t.Errorf("unsupported:\n%q\nwant\n%q", got, wantUnsupported)
	}

	// No gates: none rendered.
	v, err = chartValues(&operatorv1alpha1.Karmada{}, &inputs{domain: "cluster.local"}, ControllerManager)
	if err != nil || v["featureGates"] != nil {
		t.Errorf("featureGates %v (%v) without any set", v["featureGates"], err)
	}
}
