// Command images builds the OCI images of Flotilla's components without a
// container engine (internal/imagebuild): an OCI image layout per component
// under --out, and a tarball beside it for `docker load`. With --push it
// then pushes them to --registry, with the credentials of the Docker config.
//
//	go run ./hack/images --version v0.2.0 --platforms linux/amd64,linux/arm64
//	go run ./hack/images --registry registry.example/flotilla --push
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flotilla-io/flotilla/internal/imagebuild"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	var (
		o          imagebuild.Options
		platforms  string
		components string
		push       bool
	)
	fs.StringVar(&o.OutDir, "out", "bin/images", "directory of the image layouts and tarballs")
	fs.StringVar(&o.Registry, "registry", release.DefaultRegistry, "registry (and path) the images are named under and pushed to")
	fs.StringVar(&o.Version, "version", release.Version, "release the binaries report and the images' tag")
	fs.StringVar(&o.Revision, "revision", "", "commit of the revision label (default: git rev-parse HEAD)")
	fs.StringVar(&platforms, "platforms", imagebuild.DefaultPlatform().String(), "comma-separated linux/<arch>[/<variant>] platforms; more than one makes each image an index")
	fs.StringVar(&components, "components", "", "comma-separated components (default: all of "+componentList(imagebuild.Components())+")")
	fs.IntVar(&o.Parallel, "parallel", 0, "go builds at once (default: the number of CPUs)")
	fs.BoolVar(&push, "push", false, "push the images to --registry after building them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	var err error
	if o.Platforms, err = imagebuild.ParsePlatforms(platforms); err != nil {
		return err
	}
	for _, c := range strings.Split(components, ",") {
		if c = strings.TrimSpace(c); c != "" {
			o.Components = append(o.Components, release.Component(c))
		}
	}
	// SOURCE_DATE_EPOCH, as reproducible builds set it, dates the images;
	// without it they are dated at the Unix epoch.
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		var seconds int64
		if _, err := fmt.Sscan(epoch, &seconds); err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
		}
		o.Created = time.Unix(seconds, 0)
	}

	start := time.Now()
	results, err := imagebuild.Build(ctx, o)
	if err != nil {
		return err
	}
	for _, r := range results {
		digest, err := r.Artifact.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s  %s  %s\n", r.Reference, digest, r.Layout)
	}
	fmt.Printf("built %d images for %s in %s; tarballs for docker load: %s/<component>.tar\n",
		len(results), platforms, time.Since(start).Round(time.Second), o.OutDir)
	if !push {
		return nil
	}
	for _, r := range results {
		if err := imagebuild.Push(ctx, r.Reference, r.Artifact); err != nil {
			return fmt.Errorf("pushing %s: %w", r.Reference, err)
		}
		fmt.Printf("pushed %s\n", r.Reference)
	}
	return nil
}

func componentList(cs []release.Component) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}
