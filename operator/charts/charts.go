// Package charts holds the Helm charts of a Flotilla control plane's
// components, embedded in the operator's binary: one chart per component, each
// installed as its own release. The same charts install by hand with
// `helm install`; see README.md beside this file.
package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The charts' names, which are also their directories here.
const (
	Etcd                  = "etcd"
	APIServer             = "apiserver"
	KubeControllerManager = "kube-controller-manager"
	ControllerManager     = "controller-manager"
	Scheduler             = "scheduler"
	Descheduler           = "descheduler"
	Webhook               = "webhook"
	AggregatedAPIServer   = "aggregated-apiserver"
)

// installOrder lists the charts in the order a control plane is installed:
// storage, then the API server, then what runs against it. The descheduler
// is optional: the operator installs it only when the instance asks for it.
// The aggregated API server comes right after the API server, as in
// Karmada's operator: the controllers read Clusters through it.
var installOrder = []string{Etcd, APIServer, AggregatedAPIServer, KubeControllerManager, ControllerManager, Scheduler, Descheduler, Webhook}

//go:embed all:etcd all:apiserver all:aggregated-apiserver all:kube-controller-manager all:controller-manager all:scheduler all:descheduler all:webhook
var files embed.FS

// Names returns the charts' names in install order: etcd, apiserver,
// aggregated-apiserver, kube-controller-manager, controller-manager, scheduler, descheduler,
// webhook.
func Names() []string {
	return slices.Clone(installOrder)
}

// Load returns the embedded chart called name.
func Load(name string) (*chart.Chart, error) {
	if !slices.Contains(installOrder, name) {
		return nil, fmt.Errorf("no chart named %q; the charts are %s", name, strings.Join(installOrder, ", "))
	}
	var chartFiles []*loader.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		// The loader wants paths relative to the chart's directory, with
		// forward slashes, as in a chart archive.
		rel := strings.TrimPrefix(p, name+"/")
		chartFiles = append(chartFiles, &loader.BufferedFile{Name: path.Clean(rel), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", name, err)
	}
	c, err := loader.LoadFiles(chartFiles)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", name, err)
	}
	return c, nil
}
