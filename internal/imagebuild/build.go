package imagebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/flotilla-io/flotilla/internal/release"
)

// Options says what Build builds and where it writes it.
type Options struct {
	// Dir is where `go build` and `git` run: a directory of the module. Empty
	// is the current directory.
	Dir string
	// OutDir receives, per component, the OCI image layout <OutDir>/<component>/
	// and the tarball <OutDir>/<component>.tar.
	OutDir string
	// Registry is the registry (and path) images are named under; empty is
	// release.DefaultRegistry.
	Registry string
	// Version is the release the binaries report and the images' tag; empty
	// is release.Version.
	Version string
	// Revision is the commit the revision label names; empty asks
	// `git rev-parse HEAD` in Dir and leaves the label out if that fails.
	Revision string
	// Created is the images' creation time; zero is the Unix epoch.
	Created time.Time
	// Platforms to build for; empty is DefaultPlatform(). With more than
	// one, each image is an index.
	Platforms []v1.Platform
	// Components to build; empty is Components().
	Components []release.Component
	// Parallel is how many `go build`s run at once; 0 is the number of CPUs.
	Parallel int
}

// Result is one component's image as Build wrote it.
type Result struct {
	Component release.Component
	Reference name.Tag
	// Layout is the OCI image layout's directory, Tarball the `docker load`
	// tarball (the first platform's image).
	Layout  string
	Tarball string
	// Metadata is what the image's labels say: the version, and the
	// revision found when Options had none.
	Metadata Metadata
	// Artifact is the image read back from Layout.
	Artifact Artifact
}

// Build compiles the components' binaries for every platform, assembles
// their images and writes each as an OCI image layout and a tarball under
// o.OutDir. The binaries are built once each, o.Parallel at a time.
func Build(ctx context.Context, o Options) ([]Result, error) {
	if o.OutDir == "" {
		return nil, errors.New("no output directory")
	}
	o, err := o.withDefaults(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "flotilla-images-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()

	binaries, err := BuildBinaries(ctx, o, work)
	if err != nil {
		return nil, err
	}
	m := Metadata{Version: o.Version, Revision: o.Revision, Created: o.Created}
	results := make([]Result, 0, len(o.Components))
	for _, c := range o.Components {
		r, err := writeImage(o, c, m, binaries[c], work)
		if err != nil {
			return nil, fmt.Errorf("image of %s: %w", c, err)
		}
		results = append(results, r)
	}
	return results, nil
}

func writeImage(o Options, c release.Component, m Metadata, binaries []Binary, work string) (Result, error) {
	ref, err := name.NewTag(c.Image(o.Registry, o.Version))
	if err != nil {
		return Result{}, err
	}
	a, err := Assemble(c, m, binaries, work)
	if err != nil {
		return Result{}, err
	}
	r := Result{
		Component: c,
		Reference: ref,
		Layout:    filepath.Join(o.OutDir, string(c)),
		Tarball:   filepath.Join(o.OutDir, string(c)+".tar"),
		Metadata:  m,
	}
	if err := WriteLayout(r.Layout, ref, a); err != nil {
		return Result{}, err
	}
	if err := WriteTarball(r.Tarball, ref, a); err != nil {
		return Result{}, err
	}
	// The work directory with the layers goes away; the layout stays.
	if r.Artifact, _, err = ReadLayout(r.Layout); err != nil {
		return Result{}, err
	}
	return r, nil
}

func (o Options) withDefaults(ctx context.Context) (Options, error) {
	if o.Version == "" {
		o.Version = release.Version
	}
	if o.Revision == "" {
		o.Revision = GitRevision(ctx, o.Dir)
	}
	if len(o.Platforms) == 0 {
		o.Platforms = []v1.Platform{DefaultPlatform()}
	}
	if len(o.Components) == 0 {
		o.Components = Components()
	}
	for _, c := range o.Components {
		if _, err := MainPackage(c); err != nil {
			return o, err
		}
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.NumCPU()
	}
	return o, nil
}

// BuildBinaries builds every component of o for every platform of o into
// dir, o.Parallel at a time (defaults as Build's), and returns them by
// component in the order of o.Platforms. Each is a static linux binary
// (CGO_ENABLED=0), stripped, without local paths, that reports o.Version.
func BuildBinaries(ctx context.Context, o Options, dir string) (map[release.Component][]Binary, error) {
	o, err := o.withDefaults(ctx)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	binaries := make(map[release.Component][]Binary, len(o.Components))
	for _, c := range o.Components {
		binaries[c] = make([]Binary, len(o.Platforms))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error // the first build that failed; the others are then cancelled
		slots = make(chan struct{}, o.Parallel)
	)
	for _, c := range o.Components {
		for i, p := range o.Platforms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				if ctx.Err() != nil {
					return
				}
				path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s%s", c, p.OS, p.Architecture, p.Variant), c.Binary())
				if err := goBuild(ctx, o, c, p, path); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
				binaries[c][i] = Binary{Platform: p, Path: path}
			}()
		}
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return binaries, nil
}

// goBuild builds c for p into out.
func goBuild(ctx context.Context, o Options, c release.Component, p v1.Platform, out string) error {
	pkg, err := MainPackage(c)
	if err != nil {
		return err
	}
	env, err := buildEnv(p)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags(o.Version), "-o", out, pkg)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("go build %s for %s: %w", c, p, ctx.Err())
		}
		return fmt.Errorf("go build %s for %s: %w\n%s", c, p, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// ldflags strips the symbol table and DWARF from a binary and sets the
// release it reports.
func ldflags(version string) string {
	return "-s -w -X " + Module + "/internal/release.Version=" + version
}

// buildEnv is the environment that makes `go build` produce a static binary
// for p.
func buildEnv(p v1.Platform) ([]string, error) {
	env := []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Architecture}
	switch {
	case p.Variant == "":
	case p.Architecture == "arm" && (p.Variant == "v5" || p.Variant == "v6" || p.Variant == "v7"):
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	case p.Architecture == "arm64" && p.Variant == "v8":
	case p.Architecture == "amd64" && (p.Variant == "v1" || p.Variant == "v2" || p.Variant == "v3" || p.Variant == "v4"):
		env = append(env, "GOAMD64="+p.Variant)
	default:
		return nil, fmt.Errorf("platform %s: unknown variant %q", p, p.Variant)
	}
	return env, nil
}

// GitRevision is the commit checked out in dir (`git rev-parse HEAD`), or
// "" when there is none or git is missing.
func GitRevision(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
