// Command charts publishes Flotilla's Helm charts as a chart repository: it
// packages every chart under the given directories (each subdirectory with
// a Chart.yaml) with the Helm SDK, as `helm package` does, into one
// directory, and writes its index.yaml, as `helm repo index` does.
// `make charts` packages the components' charts (operator/charts) and the
// operator's own (deploy/charts) into bin/charts; serve that directory, or
// upload it, to `helm repo add` it.
//
//	go run ./hack/charts --out bin/charts [--url https://charts.example] DIR...
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/repo"
)

func main() {
	fs := flag.NewFlagSet("charts", flag.ExitOnError)
	out := fs.String("out", "bin/charts", "Directory of the chart repository: the archives and index.yaml.")
	url := fs.String("url", "", "URL the repository is served from, prefixed to the archives in index.yaml; empty: relative URLs.")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "charts: name at least one directory of charts")
		os.Exit(2)
	}
	if err := run(*out, *url, fs.Args(), os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "charts: %v\n", err)
		os.Exit(1)
	}
}

// run packages the charts under dirs into out and indexes them.
func run(out, url string, dirs []string, w io.Writer) error {
	charts, err := findCharts(dirs)
	if err != nil {
		return err
	}
	if len(charts) == 0 {
		return fmt.Errorf("no charts under %v", dirs)
	}
	// The archives of charts no longer built would stay in the index.
	if err := removeArchives(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	pkg := action.NewPackage()
	pkg.Destination = out
	for _, dir := range charts {
		archive, err := pkg.Run(dir, nil)
		if err != nil {
			return fmt.Errorf("packaging %s: %w", dir, err)
		}
		_, _ = fmt.Fprintf(w, "packaged %s into %s\n", dir, archive)
	}
	index, err := repo.IndexDirectory(out, url)
	if err != nil {
		return fmt.Errorf("indexing %s: %w", out, err)
	}
	index.SortEntries()
	indexFile := filepath.Join(out, "index.yaml")
	if err := index.WriteFile(indexFile, 0o644); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(w, "wrote %s\n", indexFile)
	return nil
}

// findCharts returns the chart directories directly under dirs, sorted.
func findCharts(dirs []string) ([]string, error) {
	var charts []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			chartDir := filepath.Join(dir, e.Name())
			_, err := os.Stat(filepath.Join(chartDir, "Chart.yaml"))
			switch {
			case errors.Is(err, os.ErrNotExist):
				continue
			case err != nil:
				return nil, err
			}
			charts = append(charts, chartDir)
		}
	}
	slices.Sort(charts)
	return charts, nil
}

func removeArchives(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}
