package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// imageRefAnnotation names an image in an OCI layout's index.
const imageRefAnnotation = "org.opencontainers.image.ref.name"

// Image builds the bundle image of the bundle directory dir, as
// bundle.Dockerfile describes it: an empty base, one layer per directory
// (/manifests, /metadata, /tests/scorecard), and the annotations of
// metadata/annotations.yaml as labels. Timestamps are zero, so the same
// bundle makes the same image.
func Image(dir string) (v1.Image, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetadataDir, "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(data, &meta); err != nil {
		return nil, fmt.Errorf("annotations.yaml: %w", err)
	}
	if len(meta.Annotations) == 0 {
		return nil, errors.New("annotations.yaml has no annotations")
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, sub := range []string{ManifestsDir, MetadataDir, ScorecardDir} {
		layer, err := dirLayer(dir, sub)
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     layer,
			MediaType: types.OCILayer,
			History:   v1.History{CreatedBy: "COPY " + sub + " /" + sub + "/"},
		})
		if err != nil {
			return nil, err
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Labels = meta.Annotations
	return mutate.ConfigFile(img, cfg)
}

// dirLayer is a layer holding dir/sub at /sub, files sorted, owned by root
// and readable by everyone.
func dirLayer(dir, sub string) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root := filepath.Join(dir, filepath.FromSlash(sub))
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	// The parents of sub (tests/ for tests/scorecard) come first.
	var parents []string
	for p := path.Dir(sub); p != "."; p = path.Dir(p) {
		parents = append([]string{p}, parents...)
	}
	for _, p := range parents {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, err
		}
		name := filepath.ToSlash(rel)
		info, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		switch {
		case info.IsDir():
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, Format: tar.FormatPAX})
		case info.Mode().IsRegular():
			var data []byte
			data, err = os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), Format: tar.FormatPAX}); err == nil {
				_, err = tw.Write(data)
			}
		default:
			err = fmt.Errorf("%s: only directories and regular files go into the bundle image", p)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// WriteLayout writes img as the only image of an OCI layout at dir, named
// ref, replacing what dir held.
func WriteLayout(dir, ref string, img v1.Image) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{imageRefAnnotation: ref}))
}

// ReadLayout reads the image named ref from the OCI layout at dir.
func ReadLayout(dir, ref string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Annotations[imageRefAnnotation] == ref {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no image %s in %s", ref, dir)
}

// ImageFiles lists the regular files of an image, by path without the
// leading slash, with their contents (a later layer's file wins).
func ImageFiles(img v1.Image) (map[string][]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = rc.Close()
				return nil, err
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				_ = rc.Close()
				return nil, err
			}
			files[strings.TrimPrefix(h.Name, "/")] = data
		}
		if err := rc.Close(); err != nil {
			return nil, err
		}
	}
	return files, nil
}
