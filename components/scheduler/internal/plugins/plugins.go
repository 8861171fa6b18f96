// Package plugins assembles the scheduling framework from the in-tree
// plugins of its subpackages, as selected by --plugins.
package plugins

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/components/scheduler/internal/framework"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/apienablement"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusteraffinity"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clustereviction"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/clusterlocality"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/spreadconstraint"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/tainttoleration"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/workloadaffinity"
	"github.com/flotilla-io/flotilla/components/scheduler/internal/plugins/workloadantiaffinity"
)

// Deps is what plugins need from the scheduler running them.
type Deps struct {
	// Groups finds the bindings of workload groups; without it the
	// WorkloadAffinity and WorkloadAntiAffinity plugins are left out.
	Groups framework.WorkloadGroups
}

// entry is one in-tree plugin: a filter or a score.
type entry struct {
	name   string
	filter func(Deps) framework.FilterPlugin
	score  func() framework.ScorePlugin
}

// inTree lists the plugins in the order they run: the filters in Karmada's
// order, so that the first failing reason per cluster matches its
// messages, then the scores.
func inTree() []entry {
	return []entry{
		{name: apienablement.Name, filter: func(Deps) framework.FilterPlugin { return apienablement.New() }},
		{name: tainttoleration.Name, filter: func(Deps) framework.FilterPlugin { return tainttoleration.New() }},
		{name: clusteraffinity.Name, filter: func(Deps) framework.FilterPlugin { return clusteraffinity.New() }},
		{name: spreadconstraint.Name, filter: func(Deps) framework.FilterPlugin { return spreadconstraint.New() }},
		{name: clustereviction.Name, filter: func(Deps) framework.FilterPlugin { return clustereviction.New() }},
		{name: workloadaffinity.Name, filter: func(d Deps) framework.FilterPlugin { return workloadaffinity.New(d.Groups) }},
		{name: workloadantiaffinity.Name, filter: func(d Deps) framework.FilterPlugin { return workloadantiaffinity.New(d.Groups) }},
		{name: clusterlocality.Name, score: func() framework.ScorePlugin { return clusterlocality.New() }},
	}
}

// Names lists the in-tree plugins in the order they run.
func Names() []string {
	all := inTree()
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.name
	}
	return names
}

// Selection is a validated list of plugins to enable, as karmada-scheduler's
// --plugins takes it. The zero value enables every in-tree plugin ('*').
type Selection struct {
	// on is nil for '*' alone, else the enabled names.
	on   map[string]bool
	list []string
}

// ParseSelection reads a --plugins list: '*' enables every in-tree plugin,
// 'foo' enables foo, '-foo' disables foo whatever else the list says
// ('*,-foo' is all but foo). Without '*' only the named plugins run. An
// unknown name is an error.
func ParseSelection(list []string) (Selection, error) {
	known := Names()
	var star bool
	enable, disable := map[string]bool{}, map[string]bool{}
	for _, raw := range list {
		item := strings.TrimSpace(raw)
		name, off := strings.CutPrefix(item, "-")
		switch {
		case item == "":
			continue
		case item == "*":
			star = true
			continue
		case !slices.Contains(known, name):
			return Selection{}, fmt.Errorf("unknown plugin %q; in-tree plugins: %s", name, strings.Join(known, ", "))
		case off:
			disable[name] = true
		default:
			enable[name] = true
		}
	}
	on := make(map[string]bool, len(known))
	for _, name := range known {
		on[name] = (star || enable[name]) && !disable[name]
	}
	return Selection{on: on, list: slices.Clone(list)}, nil
}

// Enabled reports whether the plugin runs.
func (s Selection) Enabled(name string) bool {
	return s.on == nil || s.on[name]
}

// String is the list as given, '*' for the zero value.
func (s Selection) String() string {
	if s.list == nil {
		return "*"
	}
	return strings.Join(s.list, ",")
}

// NewFramework builds the framework of the selected plugins, in the order
// of Names. The workload group plugins need d.Groups and are left out
// without it.
func NewFramework(s Selection, d Deps) *framework.Framework {
	var opts []framework.Option
	for _, p := range inTree() {
		if !s.Enabled(p.name) {
			continue
		}
		if d.Groups == nil && (p.name == workloadaffinity.Name || p.name == workloadantiaffinity.Name) {
			continue
		}
		if p.filter != nil {
			opts = append(opts, framework.WithFilter(p.filter(d)))
		}
		if p.score != nil {
			opts = append(opts, framework.WithScore(p.score(), 1))
		}
	}
	return framework.New(opts...)
}

// NewDefaultFramework returns every in-tree plugin that needs nothing from
// a running scheduler: the filters and scores the pure algorithm tests and
// benchmarks use.
func NewDefaultFramework() *framework.Framework {
	return NewFramework(Selection{}, Deps{})
}
