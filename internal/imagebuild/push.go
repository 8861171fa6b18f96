package imagebuild

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push writes a to the registry as ref (an index with all its images, or
// the image), with the credentials of authn.DefaultKeychain (the Docker
// config and its credential helpers). opts come after the defaults, so they
// may override the keychain or the transport.
func Push(ctx context.Context, ref name.Reference, a Artifact, opts ...remote.Option) error {
	opts = append([]remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(authn.DefaultKeychain),
	}, opts...)
	if a.Index != nil {
		return remote.WriteIndex(ref, a.Index, opts...)
	}
	return remote.Write(ref, a.Image, opts...)
}
