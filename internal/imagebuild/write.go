package imagebuild

import (
	"errors"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The annotations of an image layout's index.json entry: the tag, as the
// OCI image layout specification has it, and the full reference, which
// containerd's import reads.
const (
	annotationRefName        = "org.opencontainers.image.ref.name"
	annotationContainerdName = "io.containerd.image.name"
)

// WriteLayout writes a as the only entry of a new OCI image layout in dir,
// replacing what dir held, annotated with ref.
func WriteLayout(dir string, ref name.Tag, a Artifact) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	annotations := layout.WithAnnotations(map[string]string{
		annotationRefName:        ref.TagStr(),
		annotationContainerdName: ref.String(),
	})
	if a.Index != nil {
		return p.AppendIndex(a.Index, annotations)
	}
	return p.AppendImage(a.Image, annotations)
}

// ReadLayout reads back the artifact that WriteLayout wrote in dir, and the
// reference it was tagged with.
func ReadLayout(dir string) (Artifact, name.Tag, error) {
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return Artifact{}, name.Tag{}, err
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return Artifact{}, name.Tag{}, err
	}
	if len(manifest.Manifests) != 1 {
		return Artifact{}, name.Tag{}, fmt.Errorf("%s: want one image, the layout has %d", dir, len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	ref, err := name.NewTag(desc.Annotations[annotationContainerdName])
	if err != nil {
		return Artifact{}, name.Tag{}, fmt.Errorf("%s: reference: %w", dir, err)
	}
	var a Artifact
	switch {
	case desc.MediaType.IsIndex():
		if a.Index, err = index.ImageIndex(desc.Digest); err != nil {
			return Artifact{}, name.Tag{}, err
		}
		images, err := a.Index.IndexManifest()
		if err != nil {
			return Artifact{}, name.Tag{}, err
		}
		if len(images.Manifests) == 0 {
			return Artifact{}, name.Tag{}, fmt.Errorf("%s: empty index", dir)
		}
		a.Image, err = a.Index.Image(images.Manifests[0].Digest)
		if err != nil {
			return Artifact{}, name.Tag{}, err
		}
	case desc.MediaType.IsImage():
		if a.Image, err = index.Image(desc.Digest); err != nil {
			return Artifact{}, name.Tag{}, err
		}
	default:
		return Artifact{}, name.Tag{}, fmt.Errorf("%s: unexpected media type %s", dir, desc.MediaType)
	}
	return a, ref, nil
}

// WriteTarball writes a's image (the first platform's, for an index) to
// path as a tarball that `docker load` reads, tagged ref.
func WriteTarball(path string, ref name.Tag, a Artifact) error {
	if a.Image == nil {
		return errors.New("no image to write")
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, a.Image); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
