package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/relocate"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// airgapFlags are copy's flags for carrying images (--with-images).
type airgapFlags struct {
	withImages bool
	mirror     string
}

func (f *airgapFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.withImages, "with-images", false, "also copy every container image the add-on runs, by digest (all platforms of an index unless --platform), and write its image lock beside it")
	cmd.Flags().StringVar(&f.mirror, "image-mirror", "", "with --with-images to a registry: the registry prefix HOST[:PORT][/PATH] images go under, as MIRROR/PATH@DIGEST (default: DST's registry)")
}

// copyWithImages is copy --with-images: the add-on, its images, its lock.
func (a *app) copyWithImages(cmd *cobra.Command, src, dst source.Ref, all bool, platform string, asJSON bool, f airgapFlags) error {
	sopts, err := a.sourceOptions(source.PullNever)
	if err != nil {
		return err
	}
	sopts.StoreFirst = false // copy reads what it names
	// The add-on's and each image's signatures and other referrers travel
	// with them.
	opts := airgap.Options{Options: transfer.Options{Options: sopts, AllPlatforms: all, Referrers: referrersOn(cmd)}, Mirror: f.mirror}
	opts.ReferrerLimits.Ignored = a.ignoredReferrer
	if opts.Platform, err = parsePlatform(platform); err != nil {
		return err
	}
	if !a.quiet {
		opts.Image = func(im imagelock.Image) {
			fmt.Fprintf(a.stderr, "copied %s as %s\n", safetree.Sanitize(im.Image), safetree.Sanitize(im.Mirrored))
		}
	}
	// --verify-key checks the add-on (not its images, which their
	// publishers sign) before anything is copied, and the copy reads
	// exactly the manifest that was checked.
	if src, err = verifiedSource(cmd, src, sopts); err != nil {
		return err
	}
	var wait func()
	opts.BlobProgress, wait = a.blobBars()
	res, err := airgap.Copy(cmd.Context(), src, dst, opts)
	wait()
	if err != nil {
		return referrersHint(err)
	}
	if res.WholeIndex {
		a.infof("copied the whole index %s: something refers to it (a signature), which one platform's image would lose", res.Addon.Digest)
	}
	if asJSON {
		return a.printJSON(res)
	}
	fmt.Fprintln(a.stdout, res.Addon.Reference)
	return nil
}

// relocateFlag is unpack's --relocate.
type relocateFlag struct {
	mirror string
}

func (f *relocateFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.mirror, "relocate", "", "render the images at this mirror (HOST[:PORT][/PATH]), by digest, from the image lock that copy --with-images wrote; refuses an image the lock lacks")
}

// enabled reports whether --relocate was given.
func (f *relocateFlag) enabled() bool { return f.mirror != "" }

// check refuses --relocate beside what prints no rendered stream.
func (f *relocateFlag) check(cmd *cobra.Command, out string, raw, list, asJSON bool) error {
	if f.mirror == "" {
		return nil
	}
	if out != "" || raw || list || asJSON {
		return flagConflict(cmd, "--relocate rewrites the rendered stream: it does not go with -o, --raw, --list or --json")
	}
	if err := reference.CheckMirror(f.mirror); err != nil {
		return fmt.Errorf("--relocate: %w", err)
	}
	return nil
}

// apply relocates a rendered add-on; it does nothing without --relocate.
func (f *relocateFlag) apply(ctx context.Context, a *app, ref source.Ref, sopts source.Options, ad *unpack.Addon, res *render.Result, ropts render.Options) (*render.Result, error) {
	if f.mirror == "" {
		return res, nil
	}
	locks, err := airgap.FindLocksOf(ctx, ref, ad.Pinned, sopts)
	if errors.Is(err, imagelock.ErrNoLock) {
		return nil, fmt.Errorf("%s: %w: copy it with --with-images first", ref, imagelock.ErrNoLock)
	}
	if err != nil {
		return nil, err
	}
	out, err := relocate.Relocate(ctx, res, ad.FS, relocate.Options{Mirror: f.mirror, Lock: airgap.SelectLock(locks, f.mirror), Render: ropts})
	if err != nil {
		return nil, fmt.Errorf("relocate %s: %w", ref, err)
	}
	for _, im := range out.Unrelocated {
		a.warn([]string{fmt.Sprintf("%s: image %s is outside the fields relocated (core workload containers): left as it is", ref, safetree.Sanitize(im))})
	}
	return out.Result, nil
}
