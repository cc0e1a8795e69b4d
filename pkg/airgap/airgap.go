package airgap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Options change a copy with images.
type Options struct {
	// Options are a copy's (transfer.Copy): the source and registry
	// choices, the blob progress, the platform and the referrers.
	// AllPlatforms keeps the add-on's whole index, else one platform's
	// image (Platform; nil: the running platform). Platform, when set,
	// also picks that platform's manifest of every image that is an
	// index named by tag, but for an index something refers to when
	// Referrers is set (its signature covers the index); without it,
	// indexes are copied whole. Referrers also copies
	// what refers to the add-on and to each image (signatures, SBOMs,
	// attestations; transfer.CopyReferrers) within ReferrerLimits, except
	// the source's image locks: the copy writes its own.
	transfer.Options
	// Mirror is the registry prefix (HOST[:PORT][/PATH]) images are copied
	// under when the destination is a registry; empty means the
	// destination's registry host.
	Mirror string
	// Render is used when the add-on's config carries no inventory and
	// its tree must be rendered to find its images.
	Render render.Options
	// Image, when set, is told of each image once it is copied.
	Image func(imagelock.Image)
}

// Result describes what a copy with images wrote.
type Result struct {
	// Addon is the add-on's copy.
	Addon *source.Written `json:"addon"`
	// Lock is the lock written beside it.
	Lock *imagelock.Lock `json:"lock"`
	// LockDigest is the digest of the lock artifact's manifest.
	LockDigest string `json:"lockDigest"`
	// Referrers counts the referrers copied (Options.Referrers).
	Referrers int `json:"referrers,omitempty"`
	// WholeIndex marks an add-on index copied whole although one platform
	// was asked for: something refers to the index itself (a signature),
	// which one platform's image alone would lose.
	WholeIndex bool `json:"wholeIndex,omitempty"`
}

// skipReferrers are the artifact types a copy with images does not carry
// from the source: it writes its own image lock.
var skipReferrers = []string{string(mediatypes.ImagesLock)}

// Errors callers can test with errors.Is.
var (
	// ErrDigestChanged marks an image whose digest differs from its
	// lock's: the source does not hold what the lock says.
	ErrDigestChanged = errors.New("image digest changed")
	// ErrNoImages marks an add-on whose images cannot be listed.
	ErrNoImages = errors.New("cannot list the add-on's images")
	// ErrForeignMirror marks a registry add-on whose lock puts its images
	// in another registry.
	ErrForeignMirror = errors.New("image lock of another registry")
	// ErrNoTag marks a layout or archive destination without a tag.
	ErrNoTag = errors.New("no tag")
)

// pending is one image to copy, with where to read it.
type pending struct {
	image  string     // as the manifests write it
	from   source.Ref // where to read it
	digest string     // expected digest, "" when a tag is resolved now
}

// Copy copies the add-on at src and its images to dst (a registry
// reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or a store name), and
// writes the image lock there. An archive is written whole to a temp
// file first and appears only when complete.
//
// Each layout, archive and store the copy reads or writes is opened once
// (the layout.Handles ctx carries, else its own, which the referrers are
// copied through too) and pinned (layout.Store.Pin): its index.json is
// read once and written once, whatever the number of images.
func Copy(ctx context.Context, src, dst source.Ref, opts Options) (_ *Result, err error) {
	switch dst.Kind {
	case source.KindRegistry, source.KindLayout, source.KindArchive, source.KindStore:
	default:
		return nil, fmt.Errorf("%s: %w: images travel to a registry, oci:DIR, oci-archive:FILE or the store", dst, source.ErrUnsupportedDestination)
	}
	if opts.Mirror != "" {
		if err := reference.CheckMirror(opts.Mirror); err != nil {
			return nil, err
		}
	}
	if (dst.Kind == source.KindLayout || dst.Kind == source.KindArchive) && dst.Name == "" {
		return nil, fmt.Errorf("%s: %w: name the add-on with :TAG (%s:1.0): the layout holds its images too", dst, ErrNoTag, dst)
	}
	if layout.HandlesFrom(ctx) == nil {
		// Each image is read from, and written to, the same layouts: open
		// each once, for the referrers too (transfer.CopyReferrers gets
		// this ctx).
		h := layout.NewHandles()
		defer h.Close()
		ctx = layout.WithHandles(ctx, h)
	}
	a, err := source.Open(ctx, src, opts.Options.Options)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if src.Kind == source.KindLayout || src.Kind == source.KindArchive {
		src = a.Ref // the layout Open found (oci:DIR:REGISTRY/REPO:TAG)
	}
	if st, _, _ := a.Beside(); st != nil {
		done, err := st.Pin()
		if err != nil {
			return nil, err
		}
		// Pins nest: when the source is the destination too, this one
		// writes what the copy changed.
		defer func() {
			if derr := done(); derr != nil && err == nil {
				err = fmt.Errorf("write %s: %w", dst, derr)
			}
		}()
	}
	// The add-on's image lock does not keep an index whole: the copy
	// writes its own.
	narrow := opts.Options
	narrow.ReferrerLimits = referrerLimits(opts)
	whole, err := transfer.Narrow(ctx, a, narrow)
	if err != nil {
		return nil, err
	}
	todo, err := imagesOf(ctx, src, a, opts)
	if err != nil {
		return nil, err
	}
	if dst.Kind != source.KindArchive {
		res, err := write(ctx, a, src, todo, dst, opts)
		if res != nil {
			res.WholeIndex = whole
		}
		return res, err
	}
	tmp, err := atomicfile.TempDir(dst.Path, ".addonpkg-archive-")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	res, err := write(ctx, a, src, todo, source.Ref{Kind: source.KindLayout, Path: tmp, Name: dst.Name}, opts)
	if err != nil {
		return nil, err
	}
	res.WholeIndex = whole
	if err := layout.WriteArchive(tmp, dst.Path); err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	res.Addon.Reference = "oci-archive:" + dst.Path + "@" + res.Addon.Digest
	return res, nil
}

// imagesOf lists the images to copy: from a lock the source carries, else
// from the add-on's inventory, resolved at their registries.
func imagesOf(ctx context.Context, src source.Ref, a *source.Artifact, opts Options) ([]pending, error) {
	locks, err := FindLocksOf(ctx, src, a.Pinned(), opts.Options.Options)
	switch {
	case err == nil:
		return fromLock(src, locks, opts)
	case !errors.Is(err, imagelock.ErrNoLock):
		return nil, err
	}
	uopts := unpack.Options{Platform: opts.Platform, Repository: a.Repository()}
	var ad *unpack.Addon
	if a.Index != nil {
		ad, err = unpack.Index(ctx, a.Index, uopts)
	} else {
		ad, err = unpack.Image(ctx, a.Image, uopts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", src, ErrNoImages, err)
	}
	if ad.Form == mediatypes.FormHelm {
		// Its images are in templates addonpkg does not render: an empty
		// lock would say it runs none.
		return nil, fmt.Errorf("%s: %w: its images are in Helm's templates, which addonpkg does not render: copy the chart alone, and its images with their own tools", src, addon.ErrHelmChart)
	}
	if ad.NoInventory {
		// A config without an inventory (a foreign image, a minimal
		// third-party config): render the tree for one.
		res, err := render.Addon(ctx, ad, opts.Render)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: render: %w", src, ErrNoImages, err)
		}
		ad.SetInventory(res.Inventory())
	}
	var out []pending
	for _, im := range ad.Config.Inventory.Images {
		r, err := source.Parse("docker://" + im)
		if err != nil {
			return nil, fmt.Errorf("%s: image %q: %w", src, im, err)
		}
		p := pending{image: im, from: r}
		// An image pinned by digest is copied as that digest, whole: its
		// lock entry may name no other (imagelock.ErrPinnedDigest), so a
		// platform asked for does not narrow it to one child.
		if ref, err := name.ParseReference(im); err == nil {
			if d, ok := ref.(name.Digest); ok {
				p.digest = d.DigestStr()
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// fromLock reads each image where the source's lock says its copy is:
// beside the add-on in a layout, archive or the store; at its mirrored
// reference in a registry.
func fromLock(src source.Ref, locks []*imagelock.Lock, opts Options) ([]pending, error) {
	l := locks[0]
	if src.Kind == source.KindRegistry {
		// The lock written for this registry, else one written for a
		// layout; any other is refused below.
		r, err := opts.Registry.ParseReference(src.Name)
		if err != nil {
			return nil, err
		}
		rank := func(c *imagelock.Lock) int {
			host, _, _ := strings.Cut(c.Mirror, "/")
			switch {
			case host == r.Context().RegistryStr():
				return 2
			case c.Mirror == "":
				return 1
			}
			return 0
		}
		for _, c := range locks {
			if rank(c) > rank(l) {
				l = c
			}
		}
	}
	var out []pending
	for _, im := range l.Images {
		p := pending{image: im.Image, digest: im.Digest}
		switch src.Kind {
		case source.KindRegistry:
			// Images are read from the add-on's own registry only: a lock
			// naming another host is refused, not followed.
			r, err := opts.Registry.ParseReference(src.Name)
			if err != nil {
				return nil, err
			}
			mirror := l.Mirror
			if mirror == "" {
				// A lock written for a layout, copied into a registry: its
				// images are under the add-on's registry host.
				mirror = r.Context().RegistryStr()
			}
			host, _, _ := strings.Cut(mirror, "/")
			if host != r.Context().RegistryStr() {
				return nil, fmt.Errorf("%s: %w: its image lock names mirror %s, another registry", src, ErrForeignMirror, l.Mirror)
			}
			ref, err := imagelock.MirrorReference(mirror, im.Image, im.Digest)
			if err != nil {
				return nil, err
			}
			p.from = source.Ref{Kind: source.KindRegistry, Name: ref, Explicit: true}
		default:
			p.from = source.Ref{Kind: src.Kind, Path: src.Path, Name: im.Digest}
		}
		out = append(out, p)
	}
	return out, nil
}

// write copies each image (with its referrers), then the add-on by
// digest, its referrers and its lock, and tags the add-on last
// (spec/image-lock-v1.md 4): a failure before the tag leaves the
// destination's previous tag as it was, never an add-on without its
// images and lock. to is where things are written (a temp layout for an
// archive); src is where the add-on was read.
func write(ctx context.Context, a *source.Artifact, src source.Ref, todo []pending, to source.Ref, opts Options) (_ *Result, err error) {
	if to.Kind != source.KindRegistry {
		st, err := layoutOf(ctx, to, opts)
		if err != nil {
			return nil, err
		}
		if to.Kind == source.KindStore {
			// gc must not collect what is written untagged before the tag.
			release, err := st.Hold()
			if err != nil {
				return nil, err
			}
			defer release()
		}
		// index.json once, at the end (after the tag), for every image.
		done, err := st.Pin()
		if err != nil {
			return nil, err
		}
		defer func() {
			if derr := done(); derr != nil && err == nil {
				err = fmt.Errorf("write %s: %w", to, derr)
			}
		}()
	}
	res := &Result{}
	mirror := ""
	if to.Kind == source.KindRegistry {
		mirror = opts.Mirror
		if mirror == "" {
			r, err := opts.Registry.ParseReference(to.Name)
			if err != nil {
				return nil, err
			}
			mirror = r.Context().RegistryStr()
		}
	}
	// The lock as it is written (Encode sets the media type too), so
	// that Result.Lock, which copy --with-images --json prints, is the
	// document: it had "mediaType": "".
	lock := &imagelock.Lock{MediaType: mediatypes.ImagesLock, Mirror: mirror, Images: []imagelock.Image{}}
	for _, p := range todo {
		im, n, err := copyImage(ctx, p, to, mirror, opts)
		if err != nil {
			return nil, err
		}
		res.Referrers += n
		lock.Images = append(lock.Images, im)
		if opts.Image != nil {
			opts.Image(im)
		}
	}
	slices.SortFunc(lock.Images, func(x, y imagelock.Image) int {
		switch {
		case x.Image < y.Image:
			return -1
		case x.Image > y.Image:
			return 1
		}
		return 0
	})

	dg, err := digestOf(a)
	if err != nil {
		return nil, err
	}
	pinned, err := pinnedAt(to, dg, opts)
	if err != nil {
		return nil, err
	}
	untagged := pinned
	if to.Kind != source.KindRegistry {
		untagged.Name = "" // an untagged entry of the layout or store
	}
	if res.Addon, err = source.Write(ctx, a, untagged, opts.Options.Options); err != nil {
		return nil, err
	}
	if opts.Referrers {
		from, err := pinnedAt(src, dg, opts)
		if err != nil {
			return nil, err
		}
		n, err := copyReferrers(ctx, from, pinned, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: referrers: %w", src, err)
		}
		res.Referrers += n
	}
	h, err := v1.NewHash(res.Addon.Digest)
	if err != nil {
		return nil, err
	}
	subject := v1.Descriptor{MediaType: res.Addon.MediaType, Size: res.Addon.Size, Digest: h}
	lock.Subject = h.String()
	var ld v1.Hash
	switch to.Kind {
	case source.KindRegistry:
		r, err := opts.Registry.ParseReference(to.Name)
		if err != nil {
			return nil, err
		}
		ld, err = imagelock.Push(ctx, lock, subject, r.Context(), opts.Registry)
		if err != nil {
			return nil, err
		}
		// The tag, last: the manifest again under it (its blobs are there).
		if _, err := source.Write(ctx, a, to, opts.Options.Options); err != nil {
			return nil, err
		}
	default:
		st, err := layoutOf(ctx, to, opts)
		if err != nil {
			return nil, err
		}
		if ld, err = imagelock.Store(ctx, lock, subject, st); err != nil {
			return nil, err
		}
		if to.Name != "" {
			if _, err := st.Tag(h.String(), to.Name); err != nil {
				return nil, fmt.Errorf("tag %s: %w", to, err)
			}
		}
		if to.Kind == source.KindStore {
			res.Addon.Reference = reference.Repository(to.Name) + "@" + h.String() // as source.Write gives
		}
	}
	res.Lock, res.LockDigest = lock, ld.String()
	return res, nil
}

// digestOf is the manifest digest of what a holds now (an index narrowed
// to one image keeps the index's digest in a.Digest).
func digestOf(a *source.Artifact) (string, error) {
	var (
		h   v1.Hash
		err error
	)
	if a.Index != nil {
		h, err = a.Index.Digest()
	} else {
		h, err = a.Image.Digest()
	}
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// pinnedAt is ref pinned to the manifest dg: REPO@DIGEST in a registry or
// the store, the digest alone in a layout or archive.
func pinnedAt(ref source.Ref, dg string, opts Options) (source.Ref, error) {
	switch ref.Kind {
	case source.KindRegistry:
		r, err := opts.Registry.ParseReference(ref.Name)
		if err != nil {
			return source.Ref{}, err
		}
		ref.Name = r.Context().Name() + "@" + dg
	case source.KindStore:
		if strings.HasPrefix(ref.Name, "sha256:") {
			ref.Name = dg // an untagged entry, named by digest
		} else {
			ref.Name = reference.Repository(ref.Name) + "@" + dg
		}
	default:
		ref.Name = dg
	}
	return ref, nil
}

// copyImage copies one image, by digest, and checks the digest survived.
func copyImage(ctx context.Context, p pending, to source.Ref, mirror string, opts Options) (imagelock.Image, int, error) {
	sopts := opts.Options.Options
	sopts.StoreFirst = false
	ia, err := source.Open(ctx, p.from, sopts)
	if err != nil {
		return imagelock.Image{}, 0, fmt.Errorf("image %s: %w", p.image, err)
	}
	defer ia.Close()
	// With a platform asked for, an index resolved now gives that
	// platform's manifest; an image listed in a lock is copied as it was.
	// An index that something refers to (its signature) is kept whole
	// when referrers travel, as the add-on's own index is
	// (transfer.Narrow): the signature covers the index, not the manifest
	// chosen from it, and would be left behind.
	if ia.Index != nil && opts.Platform != nil && p.digest == "" {
		narrow := opts.Options
		narrow.AllPlatforms = false
		narrow.ReferrerLimits = referrerLimits(opts)
		if _, err := transfer.Narrow(ctx, ia, narrow); err != nil {
			return imagelock.Image{}, 0, fmt.Errorf("image %s: %w", p.image, err)
		}
		if ia.Index == nil {
			if ia.Digest, err = ia.Image.Digest(); err != nil {
				return imagelock.Image{}, 0, fmt.Errorf("image %s: %w", p.image, err)
			}
		}
	}
	dg := ia.Digest.String()
	if p.digest != "" && dg != p.digest {
		return imagelock.Image{}, 0, fmt.Errorf("image %s: %w: the lock says %s, the source holds %s", p.image, ErrDigestChanged, p.digest, dg)
	}
	mirrored, err := imagelock.MirrorReference(mirror, p.image, dg)
	if err != nil {
		return imagelock.Image{}, 0, err
	}
	target := to
	if to.Kind == source.KindRegistry {
		target = source.Ref{Kind: source.KindRegistry, Name: mirrored, Explicit: true}
	} else {
		target.Name = "" // untagged, beside the add-on
	}
	wr, err := source.Write(ctx, ia, target, sopts)
	if err != nil {
		return imagelock.Image{}, 0, fmt.Errorf("image %s: %w", p.image, err)
	}
	if wr.Digest != dg {
		return imagelock.Image{}, 0, fmt.Errorf("image %s: %w: read %s, wrote %s", p.image, ErrDigestChanged, dg, wr.Digest)
	}
	n := 0
	if opts.Referrers {
		from, err := pinnedAt(p.from, dg, opts)
		if err != nil {
			return imagelock.Image{}, 0, err
		}
		pinned := target
		if pinned.Kind != source.KindRegistry {
			pinned.Name = dg
		}
		if n, err = copyReferrers(ctx, from, pinned, opts); err != nil {
			return imagelock.Image{}, 0, fmt.Errorf("image %s: referrers: %w", p.image, err)
		}
	}
	return imagelock.Image{Image: p.image, Digest: dg, MediaType: string(wr.MediaType), Mirrored: mirrored}, n, nil
}

// copyReferrers copies what refers to the manifest at src to dst, where
// the copy wrote it, as a copy does (transfer.CopyReferrers), within
// referrerLimits.
func copyReferrers(ctx context.Context, src, dst source.Ref, opts Options) (int, error) {
	o := opts.Options
	o.ReferrerLimits = referrerLimits(opts)
	return transfer.CopyReferrers(ctx, src, dst, o)
}

// referrerLimits are opts.ReferrerLimits that also skip skipReferrers.
func referrerLimits(opts Options) referrers.Options {
	l := opts.ReferrerLimits
	l.SkipArtifactTypes = slices.Concat(l.SkipArtifactTypes, skipReferrers)
	return l
}

func layoutOf(ctx context.Context, ref source.Ref, opts Options) (*layout.Store, error) {
	if ref.Kind == source.KindStore {
		return source.StoreOf(ctx, opts.Options.Options)
	}
	return layout.HandlesFrom(ctx).Init(ref.Path)
}
