package bundled_test

import (
	"io/fs"
	"path"
	"testing"

	"github.com/flotilla-io/flotilla/internal/interpreter/bundled"
	"github.com/flotilla-io/flotilla/internal/interpreter/customizationtest"
	"github.com/flotilla-io/flotilla/lua"
	"github.com/flotilla-io/flotilla/lua/customizations"
)

// TestBundledCustomizations runs the golden tests of every bundled
// customization, and fails for a customization without tests or tests
// without a customization.
func TestBundledCustomizations(t *testing.T) {
	fsys := customizations.FS()
	dirs, err := bundled.Dirs(fsys)
	if err != nil {
		t.Fatal(err)
	}
	withTests := map[string]bool{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == bundled.TestdataDir {
			withTests[path.Dir(p)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	vm := lua.New()
	t.Cleanup(vm.Close)
	for _, dir := range dirs {
		delete(withTests, dir)
		t.Run(dir, func(t *testing.T) {
			customizationtest.Test(t, fsys, dir, vm)
		})
	}
	for dir := range withTests {
		t.Errorf("%s has testdata but no customization YAML", dir)
	}
}

// TestLoadEmbedded checks that the embedded customizations load into one
// layer.
func TestLoadEmbedded(t *testing.T) {
	vm := lua.New()
	t.Cleanup(vm.Close)
	set, err := bundled.New(customizations.FS(), vm)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := bundled.Dirs(customizations.FS())
	if err != nil {
		t.Fatal(err)
	}
	if set.Kinds() == 0 && len(dirs) > 0 {
		t.Errorf("loaded no kinds from %d customization directories", len(dirs))
	}
}
