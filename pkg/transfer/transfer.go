// Package transfer copies add-ons between the places they live: the local
// store, registries, OCI layouts, oci-archive and docker-archive files.
// Digests are preserved: manifests and blobs are copied byte for byte.
package transfer

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Options change a copy. The source options (source.Options) hold the
// store, the registry options and the blob progress of the write.
type Options struct {
	source.Options
	// AllPlatforms copies a whole index; otherwise one platform's image.
	AllPlatforms bool
	// Platform picks the image of an index (nil: running platform).
	Platform *v1.Platform
	// Referrers also copies what refers to the add-on (package referrers:
	// signatures, SBOMs, attestations), to any destination but a
	// docker-archive; ReferrerLimits bound it.
	Referrers      bool
	ReferrerLimits referrers.Options
}

// Result describes what was written (source.Written) and how many
// referrers came with it.
type Result struct {
	source.Written
	// Referrers counts the referrers copied with it (Options.Referrers).
	Referrers int `json:"referrers"`
}

// ErrUnsupportedDestination marks a destination that cannot hold the
// source (source.ErrUnsupportedDestination).
var ErrUnsupportedDestination = source.ErrUnsupportedDestination

// Copy copies src to dst.
func Copy(ctx context.Context, src, dst source.Ref, opts Options) (*Result, error) {
	a, err := source.Open(ctx, src, opts.Options)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if a.Index != nil && !opts.AllPlatforms {
		img, err := unpack.SelectImage(a.Index, opts.Platform)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		a.Image, a.Index = img, nil
	}
	return Write(ctx, a, dst, opts)
}

// Write writes an opened image or index to dst (source.Write) and, with
// Options.Referrers, what refers to it (an archive is packed with them).
func Write(ctx context.Context, a *source.Artifact, dst source.Ref, opts Options) (*Result, error) {
	if opts.Referrers && dst.Kind == source.KindArchive {
		return writeArchiveWithReferrers(ctx, a, dst, opts)
	}
	w, err := source.Write(ctx, a, dst, opts.Options)
	if err != nil {
		return nil, err
	}
	res := &Result{Written: *w}
	if !opts.Referrers {
		return res, nil
	}
	loc, err := destination(ctx, dst, opts)
	if err != nil || loc == nil {
		return res, err
	}
	return res, opts.copyReferrers(ctx, a, res, loc)
}
