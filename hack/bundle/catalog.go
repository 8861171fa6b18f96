package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The schemas and property types of a file-based catalog (FBC), the format
// opm serves and OLM's catalog sources read.
const (
	SchemaPackage = "olm.package"
	SchemaChannel = "olm.channel"
	SchemaBundle  = "olm.bundle"

	PropertyPackage     = "olm.package"
	PropertyGVK         = "olm.gvk"
	PropertyCSVMetadata = "olm.csv.metadata"
	PropertyBundleObj   = "olm.bundle.object"
)

// Icon of a package.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// PackageDoc is an olm.package blob.
type PackageDoc struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Icon           *Icon  `json:"icon,omitempty"`
	Description    string `json:"description,omitempty"`
}

// ChannelEntry is a bundle of a channel and its upgrade edges.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// ChannelDoc is an olm.channel blob.
type ChannelDoc struct {
	Schema  string         `json:"schema"`
	Package string         `json:"package"`
	Name    string         `json:"name"`
	Entries []ChannelEntry `json:"entries"`
}

// Property of a bundle.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// RelatedImage of a bundle.
type RelatedImage struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
}

// BundleDoc is an olm.bundle blob.
type BundleDoc struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name"`
	Package       string         `json:"package"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
}

// PackageProperty is the value of olm.package.
type PackageProperty struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
}

// GVKProperty is the value of olm.gvk.
type GVKProperty struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// CSVMetadata is the value of olm.csv.metadata: what catalogs show of a
// bundle's ClusterServiceVersion without unpacking its image.
type CSVMetadata struct {
	Annotations               map[string]string                           `json:"annotations,omitempty"`
	APIServiceDefinitions     operatorsv1alpha1.APIServiceDefinitions     `json:"apiServiceDefinitions,omitzero"`
	CustomResourceDefinitions operatorsv1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitzero"`
	Description               string                                      `json:"description,omitempty"`
	DisplayName               string                                      `json:"displayName,omitempty"`
	InstallModes              []operatorsv1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                                    `json:"keywords,omitempty"`
	Labels                    map[string]string                           `json:"labels,omitempty"`
	Links                     []operatorsv1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers               []operatorsv1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                                      `json:"maturity,omitempty"`
	MinKubeVersion            string                                      `json:"minKubeVersion,omitempty"`
	NativeAPIs                []metav1.GroupVersionKind                   `json:"nativeAPIs,omitempty"`
	Provider                  operatorsv1alpha1.AppLink                   `json:"provider,omitzero"`
}

// Catalog is a file-based catalog.
type Catalog struct {
	Packages []PackageDoc
	Channels []ChannelDoc
	Bundles  []BundleDoc
}

// ReadCatalog reads a catalog file; a missing file is an empty catalog.
func ReadCatalog(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Catalog{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseCatalog(data)
}

// ParseCatalog parses the YAML documents of a catalog. A blob of another
// schema is an error: this catalog has none.
func ParseCatalog(data []byte) (*Catalog, error) {
	c := &Catalog{}
	for i, doc := range splitYAML(data) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var blob map[string]any
		if err := yaml.Unmarshal(doc, &blob); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(blob) == 0 { // comments only
			continue
		}
		var meta struct {
			Schema string `json:"schema"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var err error
		switch meta.Schema {
		case SchemaPackage:
			var p PackageDoc
			err = yaml.UnmarshalStrict(doc, &p)
			c.Packages = append(c.Packages, p)
		case SchemaChannel:
			var ch ChannelDoc
			err = yaml.UnmarshalStrict(doc, &ch)
			c.Channels = append(c.Channels, ch)
		case SchemaBundle:
			var b BundleDoc
			err = yaml.UnmarshalStrict(doc, &b)
			c.Bundles = append(c.Bundles, b)
		default:
			err = fmt.Errorf("unknown schema %q", meta.Schema)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
	}
	return c, nil
}

// Marshal writes the catalog as YAML documents: packages, channels, then
// bundles by version.
func (c *Catalog) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# The Flotilla operator's file-based catalog, generated by `make bundle`\n")
	buf.WriteString("# (hack/bundle): its package, channels with their upgrade edges, and bundles.\n")
	docs := make([]any, 0, len(c.Packages)+len(c.Channels)+len(c.Bundles))
	for _, p := range c.Packages {
		docs = append(docs, p)
	}
	for _, ch := range c.Channels {
		docs = append(docs, ch)
	}
	for _, b := range c.Bundles {
		docs = append(docs, b)
	}
	for _, d := range docs {
		data, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// bundleVersion is the version of a bundle's olm.package property.
func bundleVersion(b BundleDoc) (semver.Version, error) {
	var found []PackageProperty
	for _, p := range b.Properties {
		if p.Type != PropertyPackage {
			continue
		}
		var v PackageProperty
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return semver.Version{}, fmt.Errorf("bundle %s: %s: %w", b.Name, PropertyPackage, err)
		}
		found = append(found, v)
	}
	if len(found) != 1 {
		return semver.Version{}, fmt.Errorf("bundle %s has %d %s properties, want 1", b.Name, len(found), PropertyPackage)
	}
	if found[0].PackageName != b.Package {
		return semver.Version{}, fmt.Errorf("bundle %s: %s names package %q, the bundle is in %q", b.Name, PropertyPackage, found[0].PackageName, b.Package)
	}
	v, err := semver.Parse(found[0].Version)
	if err != nil {
		return semver.Version{}, fmt.Errorf("bundle %s: version %q: %w", b.Name, found[0].Version, err)
	}
	return v, nil
}

// CatalogBundle is the bundle's olm.bundle blob.
func (b *Bundle) CatalogBundle() (BundleDoc, error) {
	csv := b.CSV
	prop := func(typ string, v any) (Property, error) {
		data, err := json.Marshal(v)
		return Property{Type: typ, Value: data}, err
	}
	var props []Property
	p, err := prop(PropertyPackage, PackageProperty{PackageName: Package, Version: csv.Spec.Version.String()})
	if err != nil {
		return BundleDoc{}, err
	}
	props = append(props, p)
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		group := crd.Name[strings.Index(crd.Name, ".")+1:]
		p, err := prop(PropertyGVK, GVKProperty{Group: group, Kind: crd.Kind, Version: crd.Version})
		if err != nil {
			return BundleDoc{}, err
		}
		props = append(props, p)
	}
	p, err = prop(PropertyCSVMetadata, CSVMetadata{
		Annotations:               csv.Annotations,
		APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
		Description:               csv.Spec.Description,
		DisplayName:               csv.Spec.DisplayName,
		InstallModes:              csv.Spec.InstallModes,
		Keywords:                  csv.Spec.Keywords,
		Labels:                    csv.Labels,
		Links:                     csv.Spec.Links,
		Maintainers:               csv.Spec.Maintainers,
		Maturity:                  csv.Spec.Maturity,
		MinKubeVersion:            csv.Spec.MinKubeVersion,
		NativeAPIs:                csv.Spec.NativeAPIs,
		Provider:                  csv.Spec.Provider,
	})
	if err != nil {
		return BundleDoc{}, err
	}
	props = append(props, p)
	doc := BundleDoc{Schema: SchemaBundle, Name: csv.Name, Package: Package, Image: b.Options.BundleImage, Properties: props}
	doc.RelatedImages = append(doc.RelatedImages, RelatedImage{Name: "bundle", Image: b.Options.BundleImage})
	for _, r := range csv.Spec.RelatedImages {
		doc.RelatedImages = append(doc.RelatedImages, RelatedImage{Name: r.Name, Image: r.Image})
	}
	return doc, nil
}

// AddBundle puts the bundle into the catalog, replacing an earlier
// rendering of the same version: its olm.bundle blob, an entry in each of
// its channels with its replaces and skipRange edges, and the package with
// its default channel and icon.
func (c *Catalog) AddBundle(b *Bundle) error {
	doc, err := b.CatalogBundle()
	if err != nil {
		return err
	}
	c.Bundles = slices.DeleteFunc(c.Bundles, func(x BundleDoc) bool { return x.Package == Package && x.Name == doc.Name })
	c.Bundles = append(c.Bundles, doc)

	entry := ChannelEntry{Name: doc.Name, Replaces: b.CSV.Spec.Replaces, SkipRange: b.CSV.Annotations[operatorsv1alpha1.SkipRangeAnnotationKey]}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if ch.Package == Package {
			ch.Entries = slices.DeleteFunc(ch.Entries, func(e ChannelEntry) bool { return e.Name == doc.Name })
		}
	}
	for _, name := range b.Options.Channels {
		i := slices.IndexFunc(c.Channels, func(ch ChannelDoc) bool { return ch.Package == Package && ch.Name == name })
		if i < 0 {
			c.Channels = append(c.Channels, ChannelDoc{Schema: SchemaChannel, Package: Package, Name: name})
			i = len(c.Channels) - 1
		}
		c.Channels[i].Entries = append(c.Channels[i].Entries, entry)
	}
	c.Channels = slices.DeleteFunc(c.Channels, func(ch ChannelDoc) bool { return len(ch.Entries) == 0 })

	pkg := PackageDoc{Schema: SchemaPackage, Name: Package, DefaultChannel: b.Options.DefaultChannel, Description: b.CSV.Annotations["description"]}
	if len(b.CSV.Spec.Icon) > 0 {
		pkg.Icon = &Icon{Data: b.CSV.Spec.Icon[0].Data, MediaType: b.CSV.Spec.Icon[0].MediaType}
	}
	if i := slices.IndexFunc(c.Packages, func(p PackageDoc) bool { return p.Name == Package }); i >= 0 {
		c.Packages[i] = pkg
	} else {
		c.Packages = append(c.Packages, pkg)
	}
	return c.sort()
}

// sort orders channels by name and bundles and channel entries by version,
// so that the file does not depend on the order bundles were added in.
func (c *Catalog) sort() error {
	versions := map[string]semver.Version{}
	for _, b := range c.Bundles {
		v, err := bundleVersion(b)
		if err != nil {
			return err
		}
		versions[b.Package+"/"+b.Name] = v
	}
	slices.SortFunc(c.Packages, func(a, b PackageDoc) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Channels, func(a, b ChannelDoc) int {
		return cmpOr(strings.Compare(a.Package, b.Package), strings.Compare(a.Name, b.Name))
	})
	for i := range c.Channels {
		pkg := c.Channels[i].Package
		slices.SortFunc(c.Channels[i].Entries, func(a, b ChannelEntry) int {
			return cmpOr(versions[pkg+"/"+a.Name].Compare(versions[pkg+"/"+b.Name]), strings.Compare(a.Name, b.Name))
		})
	}
	slices.SortFunc(c.Bundles, func(a, b BundleDoc) int {
		return cmpOr(strings.Compare(a.Package, b.Package), versions[a.Package+"/"+a.Name].Compare(versions[b.Package+"/"+b.Name]))
	})
	return nil
}

func cmpOr(cmps ...int) int {
	for _, c := range cmps {
		if c != 0 {
			return c
		}
	}
	return 0
}

// UpdateCatalog adds the bundle to the catalog file at path (made when
// missing), and refuses to write a catalog that Validate rejects.
func (b *Bundle) UpdateCatalog(path string) error {
	c, err := ReadCatalog(path)
	if err != nil {
		return err
	}
	if err := c.AddBundle(b); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("the catalog with %s would be invalid: %w", b.CSV.Name, err)
	}
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// PreviousIn is the version a bundle of version replaces in channel of the
// catalog at path: the newest of the channel's bundles older than version,
// "" when there is none.
func PreviousIn(path, channel, version string) (string, error) {
	v, err := parseVersion(version)
	if err != nil {
		return "", err
	}
	c, err := ReadCatalog(path)
	if err != nil {
		return "", err
	}
	bundles := map[string]semver.Version{}
	for _, b := range c.Bundles {
		if b.Package != Package {
			continue
		}
		bv, err := bundleVersion(b)
		if err != nil {
			return "", err
		}
		bundles[b.Name] = bv
	}
	var best *semver.Version
	for _, ch := range c.Channels {
		if ch.Package != Package || ch.Name != channel {
			continue
		}
		for _, e := range ch.Entries {
			bv, ok := bundles[e.Name]
			if ok && bv.LT(v) && (best == nil || bv.GT(*best)) {
				best = &bv
			}
		}
	}
	if best == nil {
		return "", nil
	}
	return "v" + best.String(), nil
}
