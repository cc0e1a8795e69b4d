package conformance

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// ReadOptions tune Read.
type ReadOptions struct {
	// Platform is the platform to pick from an index (default: the
	// running platform, else the index's only entry).
	Platform *v1.Platform
	// Limits are the reader limits; zero fields take the defaults of
	// spec section 9.5, which the vectors assume.
	Limits safetree.Limits
}

// Read is addonpkg's reader for the suite: it unpacks the add-on at src,
// a local image (oci:DIR:TAG, oci-archive:FILE:TAG or docker-archive:FILE:
// nothing is fetched), and describes it. A refused add-on gives a
// "refuse" Result and the error; a src of another kind gives no Result
// and an error wrapping source.ErrBadSource.
func Read(ctx context.Context, src string, opts ReadOptions) (Result, error) {
	ref, err := source.Parse(src)
	if err != nil {
		return Result{}, err
	}
	switch ref.Kind {
	case source.KindLayout, source.KindArchive, source.KindDockerArchive:
	default:
		return Result{}, fmt.Errorf("%w: %s: conformance vectors are oci:, oci-archive: or docker-archive: sources", source.ErrBadSource, src)
	}
	a, err := source.Unpack(ctx, ref, source.Options{Pull: source.PullNever}, unpack.Options{Platform: opts.Platform, Limits: opts.Limits})
	if err != nil {
		return Refusal(err), fmt.Errorf("%s: %w", src, err)
	}
	r, err := Describe(a)
	if err != nil {
		return Result{}, err
	}
	return r, nil
}
