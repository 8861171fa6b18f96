// Package customizations embeds the bundled Lua customizations: one
// directory <group>/<version>/<kind>/ per kind, holding a
// ResourceInterpreterCustomization YAML and testdata/<operation>-test.yaml
// golden tests. The interpreter serves them after the user's
// customizations and webhooks, ahead of its native rules.
package customizations

import (
	"embed"
	"io/fs"
)

// The patterns take the YAML files of <group>/<version>/<kind>/ and of its
// testdata/ (a directory pattern would fail on a directory that is still
// empty).
//
//go:embed */*/*/*.yaml */*/*/testdata/*.yaml
var files embed.FS

// FS returns the embedded tree, rooted at this directory.
func FS() fs.FS { return files }
