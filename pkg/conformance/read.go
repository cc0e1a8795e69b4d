package conformance

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

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
	Limits unpack.Limits
}

// Read is addonpkg's reader for the suite: it unpacks the add-on at src
// (oci:DIR:TAG, oci-archive:FILE:TAG, docker-archive:FILE or any other
// SOURCE addonpkg reads, registries excepted: nothing is pulled) and
// describes it. A refused add-on gives a "refuse" Result and the error.
func Read(ctx context.Context, src string, opts ReadOptions) (Result, error) {
	ref, err := source.Parse(src)
	if err != nil {
		return Result{}, err
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
