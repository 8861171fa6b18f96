// Command bundle generates the operator's OLM bundle (bundle/,
// bundle.Dockerfile) and its entry in catalog/ from config/ (`make bundle`),
// or builds the bundle image from bundle/ into an OCI layout
// (`make bundle-image`, with -image) and pushes it (`make bundle-push`, with
// -push).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/flotilla-io/flotilla/hack/bundle"
	"github.com/flotilla-io/flotilla/internal/imagebuild"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts      bundle.Options
		previous  = flag.String("previous", "", `Version the bundle replaces; default: the newest older bundle of the default channel in the catalog ("none": none).`)
		channels  = flag.String("channels", "alpha", "Comma-separated channels of the bundle.")
		createdAt = flag.String("created-at", "", `The createdAt annotation, RFC 3339 or "now"; unset by default so that the output is reproducible.`)
		image     = flag.String("image", "", "Build the bundle image of bundle/ into this OCI layout directory instead of generating.")
		push      = flag.Bool("push", false, "With -image, also push the bundle image to -bundle-image, with the credentials of the Docker config.")
	)
	flag.StringVar(&opts.Root, "root", ".", "The repository's root.")
	flag.StringVar(&opts.Version, "version", release.Version, "Version of the bundle, vX.Y.Z.")
	flag.StringVar(&opts.DefaultChannel, "default-channel", "", "The package's default channel; default the first of -channels.")
	flag.StringVar(&opts.Registry, "registry", release.DefaultRegistry, "Registry of the operator's and the bundle's images.")
	flag.StringVar(&opts.OperatorImage, "operator-image", "", "The operator's image; default REGISTRY/operator:VERSION.")
	flag.StringVar(&opts.BundleImage, "bundle-image", "", "The bundle's image; default REGISTRY/operator-bundle:VERSION.")
	flag.Parse()

	if *image != "" {
		ref := opts.BundleImage
		if ref == "" {
			ref = strings.TrimSuffix(opts.Registry, "/") + "/" + bundle.BundleRepository + ":" + opts.Version
		}
		img, err := bundle.Image(opts.Root + "/bundle")
		if err != nil {
			return err
		}
		if err := bundle.WriteLayout(*image, ref, img); err != nil {
			return err
		}
		digest, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s %s in %s\n", ref, digest, *image)
		if !*push {
			return nil
		}
		r, err := name.ParseReference(ref)
		if err != nil {
			return err
		}
		if err := imagebuild.Push(context.Background(), r, imagebuild.Artifact{Image: img}); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		fmt.Printf("pushed %s\n", ref)
		return nil
	}

	opts.Channels = strings.Split(*channels, ",")
	if opts.DefaultChannel == "" {
		opts.DefaultChannel = opts.Channels[0]
	}
	switch *previous {
	case "":
		p, err := bundle.PreviousIn(opts.Root+"/catalog/flotilla-operator/catalog.yaml", opts.DefaultChannel, opts.Version)
		if err != nil {
			return err
		}
		opts.Previous = p
	case "none":
	default:
		opts.Previous = *previous
	}
	switch *createdAt {
	case "":
	case "now":
		opts.CreatedAt = time.Now()
	default:
		t, err := time.Parse(time.RFC3339, *createdAt)
		if err != nil {
			return fmt.Errorf("-created-at: %w", err)
		}
		opts.CreatedAt = t
	}
	b, err := bundle.Generate(opts)
	if err != nil {
		return err
	}
	replaces := b.CSV.Spec.Replaces
	if replaces == "" {
		replaces = "nothing"
	}
	fmt.Printf("bundle %s (replaces %s, channels %s) in bundle/, catalog/\n", b.CSV.Name, replaces, strings.Join(b.Options.Channels, ","))
	return nil
}
