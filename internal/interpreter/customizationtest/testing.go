package customizationtest

import (
	"context"
	"io/fs"
	"strconv"
	"testing"

	"github.com/flotilla-io/flotilla/lua"
)

// Test runs the golden cases of the customization in dir as subtests of t,
// one per case, named "<file>#<n> <name>".
func Test(t *testing.T, fsys fs.FS, dir string, vm *lua.VM) {
	t.Helper()
	ctx := context.Background()
	cases, err := LoadCases(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	interp, err := Interpreter(ctx, fsys, dir, vm)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.File+"#"+strconv.Itoa(c.Index)+" "+c.Name, func(t *testing.T) {
			o := RunCase(ctx, interp, c)
			if o.Err != nil {
				t.Fatalf("%s: %s failed: %v", c.ID(), c.Operation, o.Err)
			}
			for _, d := range o.Diffs {
				t.Error(d)
			}
			for _, k := range o.Unchecked {
				t.Logf("%s: result %s has no expected output", c.ID(), k)
			}
		})
	}
}
