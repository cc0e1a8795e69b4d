// Package transfer copies add-ons between the places they live: the local
// store, registries, OCI layouts, oci-archive and docker-archive files.
// Digests are preserved: manifests and blobs are copied byte for byte,
// and CopyReferrers copies what refers to them. The one exception is
// asked for: PushAuto sends an artifact-form add-on as the image form
// (ConvertToImage, a new digest) to a registry that refuses artifacts.
package transfer

import (
	"context"
	"errors"
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
	// WholeIndex marks an index copied whole although one platform was
	// asked for: something refers to the index itself (a signature), which
	// one platform's image alone would lose.
	WholeIndex bool `json:"wholeIndex,omitempty"`
	// Platform is the platform of the image copied out of an index of
	// several (Narrow), and IndexPlatforms every platform that index has:
	// the others were not copied.
	Platform       string   `json:"platform,omitempty"`
	IndexPlatforms []string `json:"indexPlatforms,omitempty"`
}

// Copy copies src to dst.
func Copy(ctx context.Context, src, dst source.Ref, opts Options) (*Result, error) {
	a, err := source.Open(ctx, src, opts.Options)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	idx := a.Index
	whole, err := Narrow(ctx, a, opts)
	if err != nil {
		return nil, err
	}
	res, err := Write(ctx, a, dst, opts)
	if res != nil {
		res.WholeIndex = whole
		if idx != nil && a.Index == nil {
			res.Platform, res.IndexPlatforms = picked(idx, a.Image)
		}
	}
	return res, err
}

// picked is the platform of img, an image of idx, and the platforms of
// idx, when it has several to pick from (unpack.Platforms); else "" and
// nil: nothing was left behind.
func picked(idx v1.ImageIndex, img v1.Image) (string, []string) {
	all, err := unpack.Platforms(idx)
	if err != nil || len(all) < 2 {
		return "", nil
	}
	im, err := idx.IndexManifest()
	d, derr := img.Digest()
	if err != nil || derr != nil {
		return "", nil
	}
	for _, m := range im.Manifests {
		if m.Digest == d && m.Platform != nil {
			return m.Platform.String(), all
		}
	}
	return "", all
}

// Narrow makes the index a the image of one platform (opts.Platform;
// nil: the running one), unless opts copies every platform or something
// refers to the index itself, which that one image would lose (its
// signature covers the index, not a child): then the index stays whole,
// and whole says so. Only referrers that travel count (opts.Referrers,
// less the artifact types ReferrerLimits skips). An image is left as it
// is.
func Narrow(ctx context.Context, a *source.Artifact, opts Options) (whole bool, err error) {
	if a.Index == nil || opts.AllPlatforms {
		return false, nil
	}
	if whole, err = keepIndex(ctx, a, opts); err != nil || whole {
		return whole, err
	}
	img, err := unpack.SelectImage(a.Index, opts.Platform)
	if err != nil {
		return false, fmt.Errorf("%s: %w", a.Ref, err)
	}
	a.Image, a.Index = img, nil
	return false, nil
}

// keepIndex reports whether something that travels refers to the index
// a itself.
func keepIndex(ctx context.Context, a *source.Artifact, o Options) (bool, error) {
	if !o.Referrers {
		return false, nil
	}
	st, repo, ref := a.Beside()
	loc, err := referrers.Beside(ctx, st, repo, ref, o.Registry)
	if errors.Is(err, referrers.ErrUnsupported) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// The copy reports each ignored cosign tag; the decision does not
	// report it a second time.
	limits := o.ReferrerLimits
	limits.Ignored = nil
	ok, err := referrers.Any(ctx, loc, a.Digest, limits)
	if err != nil {
		return false, fmt.Errorf("%s: %w: %w", a.Ref, ErrReferrers, err)
	}
	return ok, nil
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
