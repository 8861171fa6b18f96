package main

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/flotilla-io/flotilla/operator/charts"
)

// The directories `make charts` packages.
var chartDirs = []string{
	filepath.Join("..", "..", "operator", "charts"),
	filepath.Join("..", "..", "deploy", "charts"),
}

// TestRepository packages the charts as `make charts` does, loads every
// archive back with the Helm SDK and checks that the index lists each
// chart once, at its version, with its archive's digest.
func TestRepository(t *testing.T) {
	out := filepath.Join(t.TempDir(), "charts")
	const url = "https://charts.example/flotilla"
	var log bytes.Buffer
	if err := run(out, url, chartDirs, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}

	want := append(charts.Names(), "flotilla-operator")
	slices.Sort(want)

	archives, err := filepath.Glob(filepath.Join(out, "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	loaded := make([]string, 0, len(archives))
	for _, a := range archives {
		c, err := loader.Load(a)
		if err != nil {
			t.Fatalf("loading %s back: %v", a, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", a, err)
		}
		if got, want := filepath.Base(a), c.Name()+"-"+c.Metadata.Version+".tgz"; got != want {
			t.Errorf("archive %s, want %s", got, want)
		}
		if len(c.Templates) == 0 {
			t.Errorf("%s: no templates", a)
		}
		loaded = append(loaded, c.Name())
	}
	slices.Sort(loaded)
	if diff := cmp.Diff(want, loaded); diff != "" {
		t.Errorf("archives (-want +got):\n%s", diff)
	}

	index, err := repo.LoadIndexFile(filepath.Join(out, "index.yaml"))
	if err != nil {
		t.Fatalf("loading index.yaml: %v", err)
	}
	var indexed []string
	for name, versions := range index.Entries {
		indexed = append(indexed, name)
		if len(versions) != 1 {
			t.Errorf("%s: %d versions in the index, want 1", name, len(versions))
			continue
		}
		v := versions[0]
		archive := name + "-" + v.Version + ".tgz"
		if diff := cmp.Diff([]string{url + "/" + archive}, v.URLs); diff != "" {
			t.Errorf("%s: URLs (-want +got):\n%s", name, diff)
		}
		digest, err := provenance.DigestFile(filepath.Join(out, archive))
		if err != nil {
			t.Fatal(err)
		}
		if v.Digest != digest {
			t.Errorf("%s: index digest %s, archive's %s", name, v.Digest, digest)
		}
	}
	slices.Sort(indexed)
	if diff := cmp.Diff(want, indexed); diff != "" {
		t.Errorf("index entries (-want +got):\n%s", diff)
	}

	// The operator's chart keeps its CRD in the archive.
	c, err := loader.Load(filepath.Join(out, "flotilla-operator-"+index.Entries["flotilla-operator"][0].Version+".tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.CRDObjects()) != 1 {
		t.Errorf("flotilla-operator archive: %d CRDs, want 1", len(c.CRDObjects()))
	}

	// Packaging again replaces the archives; the index still lists each
	// chart once.
	if err := run(out, "", chartDirs, &log); err != nil {
		t.Fatal(err)
	}
	index, err = repo.LoadIndexFile(filepath.Join(out, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, versions := range index.Entries {
		if len(versions) != 1 || !slices.Equal(versions[0].URLs, []string{name + "-" + versions[0].Version + ".tgz"}) {
			t.Errorf("%s after packaging again: %+v", name, versions)
		}
	}
	if !strings.Contains(log.String(), "wrote "+filepath.Join(out, "index.yaml")) {
		t.Errorf("output does not name the index:\n%s", log.String())
	}
}

func TestNoCharts(t *testing.T) {
	if err := run(t.TempDir(), "", []string{t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("packaging a directory without charts succeeded")
	}
	if err := run(t.TempDir(), "", []string{filepath.Join(t.TempDir(), "missing")}, &bytes.Buffer{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("packaging a missing directory: %v, want not found", err)
	}
}
