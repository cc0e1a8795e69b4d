package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// ErrReferrers marks a copy that failed on the add-on's referrers
// (Options.Referrers): listing them to decide whether an index travels
// whole, before anything is written (Copy returns no Result), or copying
// them once the add-on was written (Copy returns its Result).
var ErrReferrers = errors.New("copy referrers")

// copyReferrers copies what refers to the written manifest (res.Digest)
// and, for an index, to each of its manifests, from where a was read to
// dst, when o.Referrers is set; res.Referrers counts them.
func (o Options) copyReferrers(ctx context.Context, a *source.Artifact, res *Result, dst referrers.Location) error {
	if !o.Referrers {
		return nil
	}
	st, repo, ref := a.Beside()
	src, err := referrers.Beside(ctx, st, repo, ref, o.Registry)
	if errors.Is(err, referrers.ErrUnsupported) {
		return nil // a docker-archive: nothing can refer to it
	}
	if err != nil {
		return err
	}
	d, err := v1.NewHash(res.Digest)
	if err != nil {
		return err
	}
	subjects, err := referrers.Subjects(d, a.Index)
	if err != nil {
		return err
	}
	limits := o.ReferrerLimits
	if limits.MaxLayers == 0 {
		limits.MaxLayers = o.MaxLayers // --max-layers bounds referrers too
	}
	copied, err := referrers.Copy(ctx, src, dst, subjects, limits)
	res.Referrers = len(copied)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", a.Ref, ErrReferrers, err)
	}
	return nil
}

// destination is where referrers go when dst was written: its registry
// repository, the store under dst's repository, the oci: layout; nil for
// a docker-archive, which holds none.
func destination(ctx context.Context, dst source.Ref, opts Options) (referrers.Location, error) {
	switch dst.Kind {
	case source.KindRegistry:
		ref, err := opts.Registry.ParseReference(dst.Name)
		if err != nil {
			return nil, err
		}
		return referrers.Registry(ref.Context(), opts.Registry)
	case source.KindStore:
		st, err := source.StoreOf(ctx, opts.Options)
		if err != nil {
			return nil, err
		}
		return referrers.Layout(st, reference.Repository(dst.Name)), nil
	case source.KindLayout:
		st, err := layout.HandlesFrom(ctx).Open(dst.Path)
		if err != nil {
			return nil, err
		}
		return referrers.Layout(st, ""), nil
	}
	return nil, nil
}

// writeArchiveWithReferrers writes the add-on and its referrers to a
// layout beside the archive, then packs it: the archive appears only when
// complete, with them.
func writeArchiveWithReferrers(ctx context.Context, a *source.Artifact, dst source.Ref, opts Options) (*Result, error) {
	abs, err := filepath.Abs(dst.Path)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	tmp, err := atomicfile.TempDir(abs, ".addonpkg-archive-")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	w, err := source.Write(ctx, a, source.Ref{Kind: source.KindLayout, Path: tmp, Name: dst.Name}, opts.Options)
	if err != nil {
		return nil, err
	}
	res := &Result{Written: *w}
	st, err := layout.Open(tmp)
	if err != nil {
		return nil, err
	}
	if err := opts.copyReferrers(ctx, a, res, referrers.Layout(st, "")); err != nil {
		return nil, err
	}
	if err := layout.WriteArchive(tmp, dst.Path); err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	res.Reference = "oci-archive:" + dst.Path + "@" + res.Digest
	return res, nil
}

// CopyReferrers copies what refers to the manifest at src (and, for an
// index, to each of its manifests) to dst, where that manifest already
// is: the referrers step of Write on its own, for a copy made another way
// (package airgap, for the add-on and each image). It returns how many it
// copied.
func CopyReferrers(ctx context.Context, src, dst source.Ref, opts Options) (int, error) {
	if dst.Kind == source.KindArchive {
		return 0, fmt.Errorf("%s: %w: an oci-archive is written whole; copy into a layout, then pack it", dst, source.ErrUnsupportedDestination)
	}
	a, err := source.Open(ctx, src, opts.Options)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	loc, err := destination(ctx, dst, opts)
	if err != nil || loc == nil {
		return 0, err
	}
	res := &Result{Written: source.Written{Digest: a.Digest.String()}}
	opts.Referrers = true
	err = opts.copyReferrers(ctx, a, res, loc)
	return res.Referrers, err
}
