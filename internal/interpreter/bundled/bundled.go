// Package bundled serves the Lua customizations shipped with Flotilla
// (lua/customizations) for third-party kinds such as Flux, Argo, Ray,
// Kubeflow or Flink: the third layer of the interpreter chain.
package bundled

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/luarules"
	"github.com/flotilla-io/flotilla/lua"
)

// LayerName is the name of this layer in errors and logs.
const LayerName = "bundled"

// TestdataDir is the directory of golden tests beside a customization.
const TestdataDir = "testdata"

// Dirs returns the customization directories of fsys: those holding a
// YAML file outside testdata/, sorted.
func Dirs(fsys fs.FS) ([]string, error) {
	seen := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == TestdataDir {
				return fs.SkipDir
			}
			return nil
		}
		if isYAML(p) {
			seen[path.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs, nil
}

func isYAML(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
}

// LoadDir reads the customizations of one directory (its YAML files, not
// testdata/).
func LoadDir(fsys fs.FS, dir string) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*configv1alpha1.ResourceInterpreterCustomization
	for _, e := range entries {
		if e.IsDir() || !isYAML(e.Name()) {
			continue
		}
		p := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		cs, err := luarules.DecodeCustomizations(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Load reads every customization of fsys.
func Load(fsys fs.FS) ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	dirs, err := Dirs(fsys)
	if err != nil {
		return nil, err
	}
	var all []*configv1alpha1.ResourceInterpreterCustomization
	var errs []error
	for _, d := range dirs {
		cs, err := LoadDir(fsys, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, cs...)
	}
	return all, errors.Join(errs...)
}

// New returns the layer serving the customizations of fsys, their scripts
// running in vm. Broken files and customizations with bad targets make it
// fail: bundled rules are part of the product and tested.
func New(fsys fs.FS, vm *lua.VM) (*luarules.Set, error) {
	all, err := Load(fsys)
	if err != nil {
		return nil, fmt.Errorf("loading bundled customizations: %w", err)
	}
	kinds, _, errs := luarules.Merge(all)
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading bundled customizations: %w", errors.Join(errs...))
	}
	return luarules.NewSet(LayerName, vm, kinds), nil
}
