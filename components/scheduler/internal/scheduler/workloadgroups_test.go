package scheduler_test

import (
	"testing"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/fixture"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/scheduler"
)

func TestGroupPlacementChanged(t *testing.T) {
	tests := []struct {
		name     string
		old, new *fixture.BindingBuilder
		want     bool
	}{
		{"no groups", fixture.Binding("x"), fixture.Binding("x").Scheduled(fixture.T("a", 1)), false},
		{"scheduled", fixture.Binding("x").AntiAffinityGroup("g"), fixture.Binding("x").AntiAffinityGroup("g").Scheduled(fixture.T("a", 1)), true},
		{"moved", fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("a", 1)), fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("b", 1)), true},
		{"replicas only", fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("a", 1), fixture.T("b", 1)),
			fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("b", 3), fixture.T("a", 2)), false},
		{"left its group", fixture.Binding("x").AffinityGroup("g"), fixture.Binding("x"), true},
		{"changed group", fixture.Binding("x").AntiAffinityGroup("g"), fixture.Binding("x").AntiAffinityGroup("h"), true},
		{"status only", fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("a", 1)), fixture.Binding("x").AffinityGroup("g").Scheduled(fixture.T("a", 1)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scheduler.GroupPlacementChanged(tc.old.Obj(), tc.new.Obj()); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
