package imagebuild

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/flotilla-io/flotilla/internal/release"
)

// testVersion is the release the test images are built as: not the
// default, so that a binary printing it proves the -X flag reached it.
const testVersion = "v9.8.7-imagetest"

const testRegistry = "registry.example/flotilla"

// built holds the images of every component, built once for the package's
// tests (the build is the slow part: five binaries, linked in parallel).
var built struct {
	once    sync.Once
	dir     string
	results []Result
	elapsed time.Duration
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// builtImages builds the images of every component for linux/amd64 into a
// temporary directory, the first time it is called.
func builtImages(t *testing.T) []Result {
	t.Helper()
	if testing.Short() {
		t.Skip("builds every component's binary")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "imagebuild-test-")
		if built.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		built.results, built.err = Build(ctx, Options{
			OutDir:   filepath.Join(built.dir, "images"),
			Registry: testRegistry,
			Version:  testVersion,
		})
		built.elapsed = time.Since(start)
	})
	if built.err != nil {
		t.Fatalf("Build: %v", built.err)
	}
	return built.results
}

func TestImages(t *testing.T) {
	results := builtImages(t)
	t.Logf("built %d images in %s", len(results), built.elapsed.Round(time.Millisecond))

	components := make([]release.Component, 0, len(results))
	for _, r := range results {
		components = append(components, r.Component)
	}
	if diff := cmp.Diff(Components(), components); diff != "" {
		t.Fatalf("components built (-want +got):\n%s", diff)
	}

	for _, r := range results {
		t.Run(string(r.Component), func(t *testing.T) {
			c := r.Component
			wantRef := c.Image(testRegistry, testVersion)
			if r.Reference.String() != wantRef {
				t.Errorf("reference %s, want %s", r.Reference, wantRef)
			}
			if want := filepath.Join(built.dir, "images", string(c)); r.Layout != want {
				t.Errorf("layout in %s, want %s", r.Layout, want)
			}
			if want := filepath.Join(built.dir, "images", string(c)+".tar"); r.Tarball != want {
				t.Errorf("tarball %s, want %s", r.Tarball, want)
			}

			// From the OCI layout.
			a, ref, err := ReadLayout(r.Layout)
			if err != nil {
				t.Fatalf("ReadLayout: %v", err)
			}
			if ref.String() != wantRef {
				t.Errorf("layout tagged %s, want %s", ref, wantRef)
			}
			if a.Index != nil {
				t.Errorf("one platform built, but the layout holds an index")
			}
			if mt, err := a.Image.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
				t.Errorf("manifest media type %s (%v), want %s", mt, err, types.OCIManifestSchema1)
			}
			m := r.Metadata
			if m.Version != testVersion {
				t.Errorf("built as %q, want %q", m.Version, testVersion)
			}
			checkRevision(t, m.Revision)
			checkImage(t, c, a.Image, m, DefaultPlatform())

			// From the tarball: the same config and layer, under the full reference.
			tag, err := name.NewTag(wantRef)
			if err != nil {
				t.Fatal(err)
			}
			fromTar, err := tarball.ImageFromPath(r.Tarball, &tag)
			if err != nil {
				t.Fatalf("tarball.ImageFromPath(%s, %s): %v", r.Tarball, tag, err)
			}
			checkImage(t, c, fromTar, m, DefaultPlatform())
			sameContent(t, a.Image, fromTar)

			// The binary in the layer reports the version it was built as.
			bin := extractBinary(t, a.Image, c.Binary())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", c.Binary(), err, out)
			}
			if got, want := string(out), testVersion+"\n"; got != want {
				t.Errorf("%s --version printed %q, want %q", c.Binary(), got, want)
			}
		})
	}
}

// checkRevision checks that Build labelled the images with a commit of
// this repository (HEAD when it ran: other commits may have come since).
func checkRevision(t *testing.T, revision string) {
	t.Helper()
	if GitRevision(context.Background(), "") == "" {
		if revision != "" {
			t.Errorf("revision %q outside a git checkout", revision)
		}
		return
	}
	out, err := exec.Command("git", "cat-file", "-t", revision).Output()
	if err != nil || strings.TrimSpace(string(out)) != "commit" || len(revision) != 40 {
		t.Errorf("revision label %q is not a commit of this repository (%v)", revision, err)
	}
}

// checkImage checks the config and the layer list of c's image for p.
func checkImage(t *testing.T, c release.Component, img v1.Image, m Metadata, p v1.Platform) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if diff := cmp.Diff(Config(c, m), cf.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if got := cf.Platform(); got == nil || !got.Equals(p) {
		t.Errorf("platform %v, want %s", got, p)
	}
	if !cf.Created.Equal(time.Unix(0, 0)) {
		t.Errorf("created %s, want the Unix epoch", cf.Created.Time)
	}
	if got, want := cf.Config.Labels[LabelVersion], testVersion; got != want {
		t.Errorf("version label %q, want %q", got, want)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatalf("layers: %v", err)
	}
	if len(layers) != 1 {
		t.Errorf("%d layers, want 1", len(layers))
	}
	if len(cf.RootFS.DiffIDs) != 1 {
		t.Errorf("%d diff ids, want 1", len(cf.RootFS.DiffIDs))
	}
}

// sameContent checks that two images have the same config and layers.
func sameContent(t *testing.T, want, got v1.Image) {
	t.Helper()
	digests := func(img v1.Image) []v1.Hash {
		cfg, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		hashes := make([]v1.Hash, 0, 1+len(layers))
		hashes = append(hashes, cfg)
		for _, l := range layers {
			d, err := l.Digest()
			if err != nil {
				t.Fatal(err)
			}
			hashes = append(hashes, d)
		}
		return hashes
	}
	if diff := cmp.Diff(digests(want), digests(got)); diff != "" {
		t.Errorf("config and layer digests differ (-layout +tarball):\n%s", diff)
	}
}

// extractBinary checks that img's only layer holds exactly /binary, an
// executable owned by the non-root user at the epoch, and writes it to a
// temporary file, whose path it returns.
func extractBinary(t *testing.T, img v1.Image, binary string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) == 0 {
		t.Fatalf("layers: %v (%d)", err, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	path := filepath.Join(t.TempDir(), binary)
	tr := tar.NewReader(rc)
	var files []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the layer: %v", err)
		}
		files = append(files, hdr.Name)
		if hdr.Name != binary {
			continue
		}
		got := fmt.Sprintf("type %c mode %o owner %d:%d mtime %d", hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid, hdr.ModTime.Unix())
		if want := fmt.Sprintf("type %c mode 755 owner 65532:65532 mtime 0", tar.TypeReg); got != want {
			t.Errorf("%s: %s, want %s", binary, got, want)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{binary}, files); diff != "" {
		t.Fatalf("files in the layer (-want +got):\n%s", diff)
	}
	return path
}
