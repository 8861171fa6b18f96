// Package charts holds the Helm chart that installs the Flotilla operator
// (flotilla-operator/), embedded so that `flotillactl init` installs the
// operator of its own release without downloading anything.
package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// OperatorChart is the operator chart's name and directory.
const OperatorChart = "flotilla-operator"

//go:embed all:flotilla-operator
var files embed.FS

// Operator loads the embedded flotilla-operator chart.
func Operator() (*chart.Chart, error) {
	var chartFiles []*loader.BufferedFile
	err := fs.WalkDir(files, OperatorChart, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		// The loader wants paths relative to the chart's directory, as in
		// a chart archive.
		chartFiles = append(chartFiles, &loader.BufferedFile{Name: path.Clean(strings.TrimPrefix(p, OperatorChart+"/")), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", OperatorChart, err)
	}
	c, err := loader.LoadFiles(chartFiles)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", OperatorChart, err)
	}
	return c, nil
}
