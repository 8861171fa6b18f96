package bundle

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/release"
)

// The catalog is checked by Catalog.Validate, this package's
// implementation of the file-based catalog's rules: operator-registry's
// declcfg and model packages, which opm validates with, are not available
// from the Go module proxy here (403 for every version), so these tests
// also show that each rule catches what it should.

const committedCatalog = "../../catalog/flotilla-operator/catalog.yaml"

func TestCommittedCatalog(t *testing.T) {
	c, err := ReadCatalog(committedCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Packages) != 1 || c.Packages[0].Name != Package || c.Packages[0].DefaultChannel != "alpha" || c.Packages[0].Icon == nil {
		t.Errorf("packages: %+v", c.Packages)
	}
	name := CSVName(release.Version)
	i := slices.IndexFunc(c.Bundles, func(b BundleDoc) bool { return b.Name == name })
	if i < 0 {
		t.Fatalf("no bundle %s in the catalog", name)
	}
	// The catalog's entry is the bundle of bundle/.
	b, err := Build(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.CatalogBundle()
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, c.Bundles[i], want) {
		t.Errorf("the catalog's %s is not the bundle's: run make bundle", name)
	}
	// Reading and writing it back changes nothing.
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseCatalog(data)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, c, again) {
		t.Error("the catalog does not survive a round trip")
	}
}

// TestUpgradeGraph adds the next bundles to the committed catalog as `make
// bundle VERSION=...` would, and checks the edges and the one head.
func TestUpgradeGraph(t *testing.T) {
	c, err := ReadCatalog(committedCatalog)
	if err != nil {
		t.Fatal(err)
	}
	first := release.Version
	for _, o := range []Options{
		{Version: "v9.1.0", Previous: first},
		{Version: "v9.2.0", Previous: "v9.1.0", Channels: []string{"alpha", "stable"}, DefaultChannel: "stable"},
	} {
		o.Root = root
		b, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddBundle(b); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("after adding %s: %v", o.Version, err)
		}
	}
	// Adding a bundle again replaces it.
	b, err := Build(Options{Root: root, Version: "v9.2.0", Previous: "v9.1.0", Channels: []string{"alpha", "stable"}, DefaultChannel: "stable", CreatedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddBundle(b); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Bundles) != 3 || c.Packages[0].DefaultChannel != "stable" {
		t.Fatalf("bundles %d, default channel %s", len(c.Bundles), c.Packages[0].DefaultChannel)
	}
	alpha := c.Channels[slices.IndexFunc(c.Channels, func(ch ChannelDoc) bool { return ch.Name == "alpha" })]
	want := []ChannelEntry{
		{Name: CSVName(first), SkipRange: ">=0.0.0 <" + strings.TrimPrefix(first, "v")},
		{Name: "flotilla-operator.v9.1.0", Replaces: CSVName(first), SkipRange: ">=0.0.0 <9.1.0"},
		{Name: "flotilla-operator.v9.2.0", Replaces: "flotilla-operator.v9.1.0", SkipRange: ">=0.0.0 <9.2.0"},
	}
	if !sameJSON(t, alpha.Entries, want) {
		t.Errorf("alpha entries %+v, want %+v", alpha.Entries, want)
	}
	// The stable channel starts at v9.2.0; its replaces edge leads to
	// v9.1.0 of alpha, where the channel's chain ends.
	stable := c.Channels[slices.IndexFunc(c.Channels, func(ch ChannelDoc) bool { return ch.Name == "stable" })]
	if len(stable.Entries) != 1 {
		t.Errorf("stable entries %+v", stable.Entries)
	}

	// PreviousIn finds what make bundle replaces by default.
	for version, want := range map[string]string{first: "", "v0.0.1": "", "v99.0.0": first} {
		got, err := PreviousIn(committedCatalog, "alpha", version)
		if err != nil || got != want {
			t.Errorf("PreviousIn(%s) = %q, %v; want %q", version, got, err, want)
		}
	}
}

// TestValidateRules breaks a valid catalog one rule at a time.
func TestValidateRules(t *testing.T) {
	valid := func() *Catalog {
		pkg := func(v string) json.RawMessage {
			return json.RawMessage(`{"packageName":"p","version":"` + v + `"}`)
		}
		return &Catalog{
			Packages: []PackageDoc{{Schema: SchemaPackage, Name: "p", DefaultChannel: "alpha"}},
			Channels: []ChannelDoc{{Schema: SchemaChannel, Package: "p", Name: "alpha", Entries: []ChannelEntry{
				{Name: "p.v1.0.0"},
				{Name: "p.v1.1.0", Replaces: "p.v1.0.0", SkipRange: ">=0.0.0 <1.1.0"},
				{Name: "p.v1.2.0", Replaces: "p.v1.1.0", Skips: []string{"p.v1.1.1"}},
				{Name: "p.v1.1.1"},
			}}},
			Bundles: []BundleDoc{
				{Schema: SchemaBundle, Package: "p", Name: "p.v1.0.0", Image: "r/p:1.0.0", Properties: []Property{{Type: PropertyPackage, Value: pkg("1.0.0")}}},
				{Schema: SchemaBundle, Package: "p", Name: "p.v1.1.0", Image: "r/p:1.1.0", Properties: []Property{{Type: PropertyPackage, Value: pkg("1.1.0")}}},
				{Schema: SchemaBundle, Package: "p", Name: "p.v1.1.1", Image: "r/p:1.1.1", Properties: []Property{{Type: PropertyPackage, Value: pkg("1.1.1")}}},
				{Schema: SchemaBundle, Package: "p", Name: "p.v1.2.0", Image: "r/p:1.2.0", Properties: []Property{
					{Type: PropertyPackage, Value: pkg("1.2.0")},
					{Type: PropertyGVK, Value: json.RawMessage(`{"group":"g","kind":"K","version":"v1"}`)},
					{Type: PropertyCSVMetadata, Value: json.RawMessage(`{"displayName":"P"}`)},
				}},
			},
		}
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("the valid catalog: %v", err)
	}
	for _, tc := range []struct {
		name   string
		break_ func(c *Catalog)
		want   string
	}{
		{"duplicate package", func(c *Catalog) { c.Packages = append(c.Packages, c.Packages[0]) }, "declared twice"},
		{"no default channel", func(c *Catalog) { c.Packages[0].DefaultChannel = "" }, "no default channel"},
		{"missing default channel", func(c *Catalog) { c.Packages[0].DefaultChannel = "stable" }, `default channel "stable" does not exist`},
		{"duplicate channel", func(c *Catalog) { c.Channels = append(c.Channels, c.Channels[0]) }, "declared twice"},
		{"channel of no package", func(c *Catalog) { c.Channels[0].Package = "q" }, `package "q" is not in the catalog`},
		{"entry without bundle", func(c *Catalog) { c.Channels[0].Entries[0].Name = "p.v0.9.0" }, `entry "p.v0.9.0" is not a bundle`},
		{"entry twice", func(c *Catalog) { c.Channels[0].Entries = append(c.Channels[0].Entries, c.Channels[0].Entries[0]) }, "listed twice"},
		{"two heads", func(c *Catalog) { c.Channels[0].Entries[2].Replaces = "" }, "2 heads"},
		{"no head", func(c *Catalog) { c.Channels[0].Entries[0].Replaces = "p.v1.2.0" }, "0 heads"},
		{"replaces outside", func(c *Catalog) { c.Channels[0].Entries[0].Replaces = "p.v0.1.0" }, `replaces "p.v0.1.0", which is not a bundle of the package`},
		{"skips outside", func(c *Catalog) { c.Channels[0].Entries[2].Skips = []string{"p.v0.1.0", "p.v1.1.1"} }, `skips "p.v0.1.0"`},
		{"stranded", func(c *Catalog) {
			// v1.0.0 and v1.1.1 replace each other beside the chain
			// v1.2.0 -> v1.1.0.
			c.Channels[0].Entries[0].Replaces = "p.v1.1.1"
			c.Channels[0].Entries[1].Replaces = ""
			c.Channels[0].Entries[2].Skips = nil
			c.Channels[0].Entries[3].Replaces = "p.v1.0.0"
		}, `entry "p.v1.1.1" is stranded`},
		{"bad skipRange", func(c *Catalog) { c.Channels[0].Entries[1].SkipRange = "not a range" }, "skipRange"},
		{"bundle in no channel", func(c *Catalog) {
			c.Channels[0].Entries = slices.DeleteFunc(c.Channels[0].Entries, func(e ChannelEntry) bool { return e.Name == "p.v1.1.1" })
			c.Channels[0].Entries[2].Skips = nil
		}, `bundle "p.v1.1.1" of package "p" is in no channel`},
		{"duplicate bundle", func(c *Catalog) { c.Bundles = append(c.Bundles, c.Bundles[0]) }, "declared twice"},
		{"bundle without image", func(c *Catalog) { c.Bundles[0].Image = "" }, "has no image"},
		{"bundle without olm.package", func(c *Catalog) { c.Bundles[0].Properties = nil }, "0 olm.package properties"},
		{"olm.package of another package", func(c *Catalog) {
			c.Bundles[0].Properties[0].Value = json.RawMessage(`{"packageName":"q","version":"1.0.0"}`)
		}, `names package "q"`},
		{"bad version", func(c *Catalog) {
			c.Bundles[0].Properties[0].Value = json.RawMessage(`{"packageName":"p","version":"one"}`)
		}, `version "one"`},
		{"same version twice", func(c *Catalog) {
			c.Bundles[1].Properties[0].Value = json.RawMessage(`{"packageName":"p","version":"1.0.0"}`)
		}, "the same version"},
		{"incomplete gvk", func(c *Catalog) { c.Bundles[3].Properties[1].Value = json.RawMessage(`{"group":"g"}`) }, "needs kind and version"},
		{"two csv metadata", func(c *Catalog) {
			c.Bundles[3].Properties = append(c.Bundles[3].Properties, c.Bundles[3].Properties[2])
		}, "2 olm.csv.metadata"},
		{"property not JSON", func(c *Catalog) { c.Bundles[3].Properties[2].Value = json.RawMessage(`{`) }, "not JSON"},
		{"property without type", func(c *Catalog) { c.Bundles[3].Properties[2].Type = "" }, "has no type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.break_(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestParseCatalogRefusesUnknownSchemas(t *testing.T) {
	if _, err := ParseCatalog([]byte("schema: olm.deprecations\npackage: p\n")); err == nil {
		t.Error("an unknown schema was accepted")
	}
	if _, err := ParseCatalog([]byte("schema: olm.package\nname: p\ndefaultChannel: a\nunknown: 1\n")); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// sameJSON compares a and b as JSON values, whatever the order of their
// objects' keys.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		in  any
		out *any
	}{{a, &va}, {b, &vb}} {
		data, err := json.Marshal(x.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, x.out); err != nil {
			t.Fatal(err)
		}
	}
	return reflect.DeepEqual(va, vb)
}
