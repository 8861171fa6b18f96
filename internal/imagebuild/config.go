package imagebuild

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/flotilla-io/flotilla/internal/release"
)

const (
	// Source is the org.opencontainers.image.source of every image.
	Source = "https://github.com/flotilla-io/flotilla"
	// Licenses is the org.opencontainers.image.licenses of every image.
	Licenses = "Apache-2.0"
	// User is the user and group the images run as and own their binary as:
	// the conventional "nonroot" of distroless images.
	User = "65532:65532"
	// uid and gid are User's numbers, for the layer's tar headers.
	uid, gid = 65532, 65532
)

// The OCI annotation keys the images carry as labels.
const (
	LabelTitle       = "org.opencontainers.image.title"
	LabelVersion     = "org.opencontainers.image.version"
	LabelSource      = "org.opencontainers.image.source"
	LabelRevision    = "org.opencontainers.image.revision"
	LabelLicenses    = "org.opencontainers.image.licenses"
	LabelDescription = "org.opencontainers.image.description"
)

// Metadata is what an image says about the build it comes from.
type Metadata struct {
	// Version is the release the binary was built as (release.Version) and
	// the image's tag.
	Version string
	// Revision is the commit the image was built from; empty when unknown,
	// and then the revision label is left out.
	Revision string
	// Created is the image's creation time and the binary's modification
	// time in the layer. The zero time means the Unix epoch, so that the
	// same sources give the same digest.
	Created time.Time
}

// created returns m.Created, the Unix epoch when unset.
func (m Metadata) created() time.Time {
	if m.Created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return m.Created.UTC()
}

// Labels renders the OCI labels of c's image.
func Labels(c release.Component, m Metadata) map[string]string {
	labels := map[string]string{
		LabelTitle:       c.Binary(),
		LabelVersion:     m.Version,
		LabelSource:      Source,
		LabelLicenses:    Licenses,
		LabelDescription: description(c),
	}
	if m.Revision != "" {
		labels[LabelRevision] = m.Revision
	}
	return labels
}

// Config renders the runtime configuration of c's image: its binary as the
// entrypoint, run as User from /.
func Config(c release.Component, m Metadata) v1.Config {
	return v1.Config{
		Entrypoint: []string{"/" + c.Binary()},
		User:       User,
		WorkingDir: "/",
		Labels:     Labels(c, m),
	}
}

// DefaultPlatform is the platform images are built for when none is asked:
// linux/amd64.
func DefaultPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: "amd64"}
}

// ParsePlatforms parses a comma-separated list of platforms such as
// "linux/amd64,linux/arm64". Only linux platforms are accepted, each once;
// an empty list is DefaultPlatform().
func ParsePlatforms(s string) ([]v1.Platform, error) {
	var platforms []v1.Platform
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		p, err := v1.ParsePlatform(field)
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", field, err)
		}
		if p.OS != "linux" || p.Architecture == "" || p.OSVersion != "" {
			return nil, fmt.Errorf("platform %q: want linux/<arch>[/<variant>]", field)
		}
		for _, seen := range platforms {
			if seen.Equals(*p) {
				return nil, fmt.Errorf("platform %q listed twice", field)
			}
		}
		platforms = append(platforms, *p)
	}
	if len(platforms) == 0 {
		platforms = []v1.Platform{DefaultPlatform()}
	}
	return platforms, nil
}
