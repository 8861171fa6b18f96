package imagebuild

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/flotilla-io/flotilla/internal/release"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}

	firstOfJanuary = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// fakeBinaries writes a small file per platform, standing for binaries that
// cannot run here anyway, and returns them in the order of platforms.
func fakeBinaries(t *testing.T, c release.Component, platforms ...v1.Platform) []Binary {
	t.Helper()
	dir := t.TempDir()
	bins := make([]Binary, 0, len(platforms))
	for _, p := range platforms {
		path := filepath.Join(dir, p.Architecture, c.Binary())
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("binary of "+string(c)+" for "+p.String()), 0o700); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, Binary{Platform: p, Path: path})
	}
	return bins
}

func TestMultiPlatformIndex(t *testing.T) {
	c := release.Scheduler
	m := Metadata{Version: "v0.2.0", Revision: "abc"}
	a, err := Assemble(c, m, fakeBinaries(t, c, amd64, arm64), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(c.Image("", m.Version))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	layoutDir, tarPath := filepath.Join(dir, "scheduler"), filepath.Join(dir, "scheduler.tar")
	if err := WriteLayout(layoutDir, ref, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarball(tarPath, ref, a); err != nil {
		t.Fatal(err)
	}

	back, gotRef, err := ReadLayout(layoutDir)
	if err != nil {
		t.Fatalf("ReadLayout: %v", err)
	}
	if gotRef.String() != "ghcr.io/flotilla-io/scheduler:v0.2.0" {
		t.Errorf("layout tagged %s", gotRef)
	}
	if back.Index == nil {
		t.Fatal("two platforms built, but the layout holds no index")
	}
	if mt, _ := back.Index.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", mt, types.OCIImageIndex)
	}
	want, _ := a.Digest()
	if got, _ := back.Digest(); got != want {
		t.Errorf("index read back as %s, assembled as %s", got, want)
	}
	manifest, err := back.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	platforms := make([]v1.Platform, 0, len(manifest.Manifests))
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			t.Fatalf("manifest %s has no platform", desc.Digest)
		}
		platforms = append(platforms, *desc.Platform)
		img, err := back.Index.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.Platform(); got == nil || !got.Equals(*desc.Platform) {
			t.Errorf("image for %s says it is for %v", desc.Platform, got)
		}
		if diff := cmp.Diff(Config(c, m), cf.Config); diff != "" {
			t.Errorf("config for %s (-want +got):\n%s", desc.Platform, diff)
		}
	}
	if diff := cmp.Diff([]v1.Platform{amd64, arm64}, platforms); diff != "" {
		t.Errorf("platforms of the index (-want +got):\n%s", diff)
	}

	// docker load takes one platform: the tarball holds the first.
	fromTar, err := tarball.ImageFromPath(tarPath, &ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := fromTar.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Platform(); got == nil || !got.Equals(amd64) {
		t.Errorf("tarball's image is for %v, want %s", got, amd64)
	}
}

func TestAssembleIsReproducible(t *testing.T) {
	c := release.Webhook
	m := Metadata{Version: "v0.1.0"}
	bins := fakeBinaries(t, c, amd64)
	digest := func() v1.Hash {
		a, err := Assemble(c, m, bins, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		d, err := a.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest()
	// The file's own time and mode do not reach the image.
	if err := os.Chtimes(bins[0].Path, firstOfJanuary, firstOfJanuary); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bins[0].Path, 0o555); err != nil {
		t.Fatal(err)
	}
	if second := digest(); second != first {
		t.Errorf("the same binary gave %s, then %s", first, second)
	}
}

// serveRegistry serves an in-process registry on 127.0.0.1 and returns its
// host:port; go-containerregistry speaks plain HTTP to loopback addresses.
func serveRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(
		registry.Logger(log.New(io.Discard, "", 0)),
		registry.WithBlobHandler(registry.NewDiskBlobHandler(t.TempDir())),
	))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestPush(t *testing.T) {
	host := serveRegistry(t)
	ctx := context.Background()

	push := func(t *testing.T, ref name.Tag, a Artifact) {
		t.Helper()
		if err := Push(ctx, ref, a); err != nil {
			t.Fatalf("Push(%s): %v", ref, err)
		}
		want, err := a.Digest()
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(ref, remote.WithContext(ctx))
		if err != nil {
			t.Fatalf("getting %s back: %v", ref, err)
		}
		if desc.Digest != want {
			t.Errorf("%s is %s in the registry, %s here", ref, desc.Digest, want)
		}
	}

	t.Run("index", func(t *testing.T) {
		c := release.Operator
		m := Metadata{Version: "v0.2.0"}
		a, err := Assemble(c, m, fakeBinaries(t, c, amd64, arm64), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(c.Image(host+"/flotilla", m.Version))
		if err != nil {
			t.Fatal(err)
		}
		push(t, ref, a)
		index, err := remote.Index(ref, remote.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		img, err := index.Image(mustDigest(t, a.Image))
		if err != nil {
			t.Fatalf("the first platform's image is not in the pushed index: %v", err)
		}
		sameContent(t, a.Image, img)
	})

	t.Run("built images", func(t *testing.T) {
		for _, r := range builtImages(t) {
			// The layout's image under the registry's name, as `make push
			// REGISTRY=...` names it.
			ref, err := name.NewTag(r.Component.Image(host+"/flotilla", testVersion))
			if err != nil {
				t.Fatal(err)
			}
			push(t, ref, r.Artifact)
			img, err := remote.Image(ref, remote.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			sameContent(t, r.Artifact.Image, img)
		}
	})
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
