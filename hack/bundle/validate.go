package bundle

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/blang/semver/v4"
)

// Validate checks the catalog against the rules of the file-based catalog
// format that opm and OLM's catalog operator enforce when they load one:
//
//   - every blob has its schema's required fields; package, channel (per
//     package) and bundle (per package) names are unique;
//   - a package's default channel exists; every channel and bundle belongs
//     to a package of the catalog;
//   - a bundle has exactly one olm.package property naming its package with
//     a semantic version, no two bundles of a package share a version, its
//     olm.gvk properties are complete, at most one olm.csv.metadata, and
//     every property value is JSON;
//   - every channel entry is a bundle of the package, listed once; a
//     channel has exactly one head (an entry no other entry replaces or
//     skips); replaces and skips name bundles of the package (a replaces
//     edge may lead out of the channel, where the chain ends); the replaces
//     chain from the head has no cycle, and every entry is on it or
//     skipped by an entry on it (none is stranded); a skipRange parses;
//   - every bundle is in at least one channel.
//
// operator-registry's declcfg and model packages implement these rules,
// but that module is not available from the Go module proxy here (403), so
// this is a reimplementation of them, tested in validate_test.go.
func (c *Catalog) Validate() error {
	v := &catalogValidation{
		packages: map[string]PackageDoc{},
		bundles:  map[blobKey]BundleDoc{},
		channels: map[blobKey]bool{},
	}
	v.checkPackages(c.Packages)
	v.checkBundles(c.Bundles)
	inChannel := map[blobKey]bool{}
	for _, ch := range c.Channels {
		v.checkChannel(ch)
		for _, e := range ch.Entries {
			inChannel[blobKey{ch.Package, e.Name}] = true
		}
	}
	for _, p := range c.Packages {
		if p.DefaultChannel == "" {
			v.fail("package %q has no default channel", p.Name)
		} else if !v.channels[blobKey{p.Name, p.DefaultChannel}] {
			v.fail("package %q: default channel %q does not exist", p.Name, p.DefaultChannel)
		}
	}
	for k := range v.bundles {
		if !inChannel[k] {
			v.fail("bundle %q of package %q is in no channel", k.name, k.pkg)
		}
	}
	return errors.Join(v.errs...)
}

// blobKey names a channel or bundle within its package.
type blobKey struct{ pkg, name string }

// catalogValidation is what Validate has seen so far, and its findings.
type catalogValidation struct {
	packages map[string]PackageDoc
	bundles  map[blobKey]BundleDoc
	channels map[blobKey]bool
	errs     []error
}

func (v *catalogValidation) fail(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *catalogValidation) checkPackages(packages []PackageDoc) {
	for _, p := range packages {
		if p.Schema != SchemaPackage || p.Name == "" {
			v.fail("package %q: schema and name are required", p.Name)
			continue
		}
		if _, dup := v.packages[p.Name]; dup {
			v.fail("package %q is declared twice", p.Name)
		}
		v.packages[p.Name] = p
		if p.Icon != nil && (p.Icon.Data == "" || p.Icon.MediaType == "") {
			v.fail("package %q: icon needs base64data and mediatype", p.Name)
		}
	}
}

func (v *catalogValidation) checkBundles(bundles []BundleDoc) {
	seenVersion := map[string]string{} // package/version -> bundle
	for _, b := range bundles {
		if b.Schema != SchemaBundle || b.Name == "" || b.Package == "" {
			v.fail("bundle %q: schema, name and package are required", b.Name)
			continue
		}
		if _, ok := v.packages[b.Package]; !ok {
			v.fail("bundle %q: package %q is not in the catalog", b.Name, b.Package)
		}
		k := blobKey{b.Package, b.Name}
		if _, dup := v.bundles[k]; dup {
			v.fail("bundle %q of package %q is declared twice", b.Name, b.Package)
		}
		v.bundles[k] = b
		if b.Image == "" {
			v.fail("bundle %q has no image", b.Name)
		}
		if err := validateProperties(b); err != nil {
			v.errs = append(v.errs, err)
		}
		version, err := bundleVersion(b)
		if err != nil {
			v.errs = append(v.errs, err)
			continue
		}
		if other, dup := seenVersion[b.Package+"/"+version.String()]; dup {
			v.fail("bundles %q and %q of package %q have the same version %s", other, b.Name, b.Package, version)
		}
		seenVersion[b.Package+"/"+version.String()] = b.Name
	}
}

func (v *catalogValidation) checkChannel(ch ChannelDoc) {
	if ch.Schema != SchemaChannel || ch.Name == "" || ch.Package == "" {
		v.fail("channel %q: schema, name and package are required", ch.Name)
		return
	}
	if _, ok := v.packages[ch.Package]; !ok {
		v.fail("channel %q: package %q is not in the catalog", ch.Name, ch.Package)
	}
	if v.channels[blobKey{ch.Package, ch.Name}] {
		v.fail("channel %q of package %q is declared twice", ch.Name, ch.Package)
	}
	v.channels[blobKey{ch.Package, ch.Name}] = true
	isBundle := func(name string) bool { _, ok := v.bundles[blobKey{ch.Package, name}]; return ok }
	if err := validateChannel(ch, isBundle); err != nil {
		v.errs = append(v.errs, err)
	}
}

func validateProperties(b BundleDoc) error {
	var errs []error
	csvMetadata := 0
	for i, p := range b.Properties {
		if p.Type == "" {
			errs = append(errs, fmt.Errorf("bundle %q: property %d has no type", b.Name, i))
			continue
		}
		if !json.Valid(p.Value) {
			errs = append(errs, fmt.Errorf("bundle %q: property %d (%s): value is not JSON", b.Name, i, p.Type))
			continue
		}
		switch p.Type {
		case PropertyGVK:
			var g GVKProperty
			if err := json.Unmarshal(p.Value, &g); err != nil || g.Kind == "" || g.Version == "" {
				errs = append(errs, fmt.Errorf("bundle %q: %s %s needs kind and version", b.Name, p.Type, p.Value))
			}
		case PropertyCSVMetadata:
			csvMetadata++
			var m CSVMetadata
			if err := json.Unmarshal(p.Value, &m); err != nil {
				errs = append(errs, fmt.Errorf("bundle %q: %s: %w", b.Name, p.Type, err))
			}
		case PropertyBundleObj:
			var o struct {
				Data []byte `json:"data"`
			}
			if err := json.Unmarshal(p.Value, &o); err != nil || len(o.Data) == 0 {
				errs = append(errs, fmt.Errorf("bundle %q: %s needs base64 data", b.Name, p.Type))
			}
		}
	}
	if csvMetadata > 1 {
		errs = append(errs, fmt.Errorf("bundle %q has %d %s properties, want at most 1", b.Name, csvMetadata, PropertyCSVMetadata))
	}
	return errors.Join(errs...)
}

// validateChannel checks a channel's entries and upgrade edges.
func validateChannel(ch ChannelDoc, isBundle func(string) bool) error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("channel %q of package %q: "+format, append([]any{ch.Name, ch.Package}, args...)...))
	}
	if len(ch.Entries) == 0 {
		fail("no entries")
		return errors.Join(errs...)
	}
	entries := map[string]ChannelEntry{}
	for _, e := range ch.Entries {
		if e.Name == "" {
			fail("an entry has no name")
			continue
		}
		if _, dup := entries[e.Name]; dup {
			fail("entry %q is listed twice", e.Name)
		}
		entries[e.Name] = e
		if !isBundle(e.Name) {
			fail("entry %q is not a bundle of the package", e.Name)
		}
		if e.SkipRange != "" {
			if _, err := semver.ParseRange(e.SkipRange); err != nil {
				fail("entry %q: skipRange %q: %v", e.Name, e.SkipRange, err)
			}
		}
	}
	replacedOrSkipped := map[string]bool{}
	for _, e := range entries {
		if e.Replaces != "" {
			if !isBundle(e.Replaces) {
				fail("entry %q replaces %q, which is not a bundle of the package", e.Name, e.Replaces)
			}
			if e.Replaces == e.Name {
				fail("entry %q replaces itself", e.Name)
			}
			replacedOrSkipped[e.Replaces] = true
		}
		for _, s := range e.Skips {
			if !isBundle(s) {
				fail("entry %q skips %q, which is not a bundle of the package", e.Name, s)
			}
			replacedOrSkipped[s] = true
		}
	}
	var heads []string
	for name := range entries {
		if !replacedOrSkipped[name] {
			heads = append(heads, name)
		}
	}
	if len(heads) != 1 {
		fail("%d heads %q, want exactly one", len(heads), heads)
		return errors.Join(errs...)
	}
	// Walk the replaces chain from the head, which ends where it leaves the
	// channel: no cycle, and every entry is on it or skipped from it.
	onChain, skipped := map[string]bool{}, map[string]bool{}
	for name := heads[0]; name != ""; {
		if onChain[name] {
			fail("the replaces chain has a cycle at %q", name)
			break
		}
		onChain[name] = true
		e, ok := entries[name]
		if !ok {
			break
		}
		for _, s := range e.Skips {
			skipped[s] = true
		}
		name = e.Replaces
	}
	for name := range entries {
		if !onChain[name] && !skipped[name] {
			fail("entry %q is stranded: not on the replaces chain from the head %q, nor skipped from it", name, heads[0])
		}
	}
	return errors.Join(errs...)
}
