package imagebuild

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/flotilla-io/flotilla/internal/release"
)

// Binary is a component's executable built for one platform.
type Binary struct {
	Platform v1.Platform
	// Path is the file to put in the image.
	Path string
}

// Artifact is a component's image: with one platform an Image, with several
// an Index of one image per platform, Image then being the first platform's
// (the one a `docker load` tarball holds).
type Artifact struct {
	Image v1.Image
	Index v1.ImageIndex
}

// Digest is the digest a registry knows the artifact by: the index's when
// there is one, else the image's.
func (a Artifact) Digest() (v1.Hash, error) {
	if a.Index != nil {
		return a.Index.Digest()
	}
	return a.Image.Digest()
}

// Assemble makes c's image out of its binaries, one per platform, in the
// order given. layerDir receives the compressed layers, which the returned
// artifact reads from: keep it until the artifact is written.
func Assemble(c release.Component, m Metadata, binaries []Binary, layerDir string) (Artifact, error) {
	if len(binaries) == 0 {
		return Artifact{}, errors.New("no binaries to assemble")
	}
	images := make([]v1.Image, 0, len(binaries))
	for _, b := range binaries {
		img, err := platformImage(c, m, b, layerDir)
		if err != nil {
			return Artifact{}, fmt.Errorf("%s for %s: %w", c, b.Platform, err)
		}
		images = append(images, img)
	}
	if len(images) == 1 {
		return Artifact{Image: images[0]}, nil
	}
	adds := make([]mutate.IndexAddendum, 0, len(images))
	for i, img := range images {
		p := binaries[i].Platform
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	index := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return Artifact{Image: images[0], Index: index}, nil
}

// platformImage is the image of c for b's platform: b's file at
// /<c.Binary()> in one layer on an empty base, with Config(c, m).
func platformImage(c release.Component, m Metadata, b Binary, layerDir string) (v1.Image, error) {
	layerPath := filepath.Join(layerDir, fmt.Sprintf("%s-%s-%s%s.tar.gz",
		c, b.Platform.OS, b.Platform.Architecture, b.Platform.Variant))
	if err := writeLayer(layerPath, b.Path, c.Binary(), m); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: m.created()},
			CreatedBy: createdBy(c, m),
			Comment:   "static binary at /" + c.Binary(),
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = b.Platform.OS
	cf.Architecture = b.Platform.Architecture
	cf.Variant = b.Platform.Variant
	cf.Created = v1.Time{Time: m.created()}
	cf.Config = Config(c, m)
	return mutate.ConfigFile(img, cf)
}

// createdBy is the history entry of c's layer: how its binary is built.
func createdBy(c release.Component, m Metadata) string {
	pkg, err := MainPackage(c)
	if err != nil {
		pkg = c.Binary()
	}
	return fmt.Sprintf("CGO_ENABLED=0 go build -trimpath -ldflags %q %s", ldflags(m.Version), pkg)
}

// writeLayer writes to path a gzipped tar holding the file at binPath as
// name: mode 0755, owned by User, modified at m's creation time. The same
// inputs give the same bytes.
func writeLayer(path, binPath, name string, m Metadata) (err error) {
	bin, err := os.Open(binPath)
	if err != nil {
		return err
	}
	defer func() { _ = bin.Close() }()
	info, err := bin.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", binPath)
	}

	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	// The gzip header carries no name or time, so it does not vary.
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     info.Size(),
		Mode:     0o755,
		Uid:      uid,
		Gid:      gid,
		ModTime:  m.created(),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, bin); err != nil {
		return fmt.Errorf("writing %s into the layer: %w", binPath, err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
