package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/internal/retry"
	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/output"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// FormFolder is the form of an add-on read as a plain tree: a folder, a
// file, an http download or a git commit.
const FormFolder mediatypes.Form = "folder"

// Resolve parses SOURCE and unpacks it: the one call for "any SOURCE to
// its add-on tree and metadata". s parses with opts.Parse, so a kind of
// opts.Locations is read by its own syntax.
func Resolve(ctx context.Context, s string, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	ref, err := opts.Parse(s)
	if err != nil {
		return nil, err
	}
	return Unpack(ctx, ref, opts, uopts)
}

// Unpack resolves any SOURCE to its add-on tree and metadata, with the
// pinned SOURCE of what it read in Addon.Pinned.
func Unpack(ctx context.Context, ref Ref, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	if opts.isTree(ref.Kind) {
		if opts.Verify != nil {
			return nil, fmt.Errorf("%s: %w: a %s source has no manifest digest to sign", ref, ErrNotVerifiable, ref.Kind)
		}
		t, err := LoadTree(ctx, ref, opts, uopts.Limits)
		if err != nil {
			return nil, err
		}
		ad, err := t.Addon()
		if err != nil {
			return nil, err
		}
		ad.Source = recorded(ref, ad.Pinned, opts)
		return ad, nil
	}
	// A compressed archive's decompressed copy is image bytes too.
	opts.maxImageBytes = uopts.Limits.MaxImageBytes
	a, err := Open(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if uopts.Repository == "" {
		uopts.Repository = a.Repository()
	}
	// A registry blob that arrived changed or cut short is fetched again
	// (the unpack starts over: it holds nothing on disk); a local file
	// that does not match its digest is corrupt, and read once.
	var ad *unpack.Addon
	img, idx := a.Image, a.Index
	if a.blobs != nil {
		// The unpacker verifies every layer it reads: a registry's
		// blobs need not be hashed on the way in as well.
		img, idx = a.blobs.UnverifiedImage(ctx, img), a.blobs.UnverifiedIndex(ctx, idx)
	}
	unpackOnce := func() (err error) {
		if idx != nil {
			ad, err = unpack.Index(ctx, idx, uopts)
		} else {
			ad, err = unpack.Image(ctx, img, uopts)
		}
		return err
	}
	if a.remote {
		err = retry.Do(ctx, unpackOnce)
	} else {
		err = unpackOnce()
	}
	if hex, ok := reference.Attachment(ref.Name); ok && errors.Is(err, unpack.ErrUnsupported) {
		// cosign's sha256-HEX.sig, .att, .sbom tags (a signature, an
		// attestation, an SBOM, with no subject to name): the add-on is
		// the manifest they hang on.
		return nil, fmt.Errorf("%s: %w; the tag names what hangs on the manifest sha256:%s: unpack that one", ref, err, hex)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	ad.Pinned = a.Pinned()
	ad.Source = recorded(ref, ad.Pinned, opts)
	return ad, nil
}

// recorded is unpack.Addon.Source of an add-on read from ref and pinned
// as pinned: pinned, with the path of a local kind made absolute
// (Ref.Abs); ref's absolute form when a local kind has no pinned one (a
// folder, a docker-archive). A relative oci:DIR@sha256:... recorded in
// an inventory named another place, or none, read back from elsewhere.
func recorded(ref Ref, pinned string, opts Options) string {
	switch ref.Kind {
	case KindDir, KindLayout, KindArchive, KindDockerArchive:
	default:
		return pinned
	}
	if pinned != "" {
		p, err := opts.Parse(pinned)
		if err != nil || p.Kind != ref.Kind {
			return pinned
		}
		ref = p
	}
	abs, err := ref.Abs()
	if err != nil {
		return pinned
	}
	return abs.String()
}

// UnpackTo unpacks ref into dir, which must not exist or be empty, all
// or nothing (output.Writer): files are written while the layers are
// read, large ones stream to a spill directory beside dir and are moved
// into place, and dir appears only once the whole add-on checked out
// (links and case collisions included). The returned Addon holds the
// tree's shape, not its bytes (unpack.Options.SinkOnly); uopts' Sink and
// SpillDir are set here.
func UnpackTo(ctx context.Context, ref Ref, dir string, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	w, err := output.NewWriter(dir)
	if err != nil {
		return nil, err
	}
	// On any way out but Commit (an error, an interrupt, a panic), the
	// temp directory goes; after Commit, this is a no-op.
	defer w.Abort()
	uopts.Sink, uopts.SinkOnly = w, true
	if uopts.SpillDir, err = w.SpillDir(); err != nil {
		return nil, err
	}
	ad, err := Unpack(ctx, ref, opts, uopts)
	if err != nil {
		return nil, err
	}
	if err := w.Commit(ad.FS); err != nil {
		return nil, err
	}
	return ad, nil
}

// SpilledMemoryBudget is the unpack.Options.MemoryBudget of
// UnpackSpilled when the caller sets none: the file bytes of a tree held
// in memory, past which its files wait on disk. Measured on the perf
// lab's medium add-on (18 MiB, 1,967 files) to stdout: 8 MiB peaks at
// 64–66 MiB, 4 MiB at 60–62 MiB, 2 MiB no lower, at the same speed.
const SpilledMemoryBudget = 4 << 20

// UnpackSpilled is Unpack with files over unpack.SpillThreshold, and every
// file past uopts.MemoryBudget (SpilledMemoryBudget if 0; none if
// negative), waiting in a temporary directory rather than in memory until
// the tree is read (rendered); release removes it, once the tree is no
// longer needed. The memory an image's tree takes is then bounded by the
// budget, whatever the add-on's size. A tree source (folder, http, git)
// is read into memory as by Unpack.
func UnpackSpilled(ctx context.Context, ref Ref, opts Options, uopts unpack.Options) (ad *unpack.Addon, release func(), err error) {
	dir, err := os.MkdirTemp("", "addonpkg-unpack-*")
	if err != nil {
		return nil, nil, err
	}
	release = func() {
		if ad != nil && ad.FS != nil {
			ad.FS.Close()
		}
		os.RemoveAll(dir)
	}
	uopts.SpillDir = dir
	if uopts.MemoryBudget == 0 {
		uopts.MemoryBudget = SpilledMemoryBudget
	}
	if ad, err = Unpack(ctx, ref, opts, uopts); err != nil {
		release()
		return nil, nil, err
	}
	return ad, release, nil
}

// Pinned is the SOURCE of exactly this artifact: REGISTRY/REPO@sha256:...,
// NAME@sha256:... in the store, oci:DIR@sha256:...,
// oci-archive:FILE@sha256:...; empty for a docker-archive (which cannot
// name a manifest by digest).
func (a *Artifact) Pinned() string {
	p, ok := a.location().(Pinner)
	if !ok || a.Digest.Hex == "" {
		return ""
	}
	return p.Pinned(a)
}

// Repository is the repository name the artifact was read under
// (REGISTRY/REPO for a registry, the name for the store, a
// docker-archive's REFERENCE), without tag or digest; "" when the source
// names none.
func (a *Artifact) Repository() string {
	if p, ok := a.location().(Pinner); ok {
		return p.Repository(a)
	}
	return ""
}

// namedRepository is the repository of a name that is not a bare digest.
func namedRepository(name string) string {
	if strings.HasPrefix(name, "sha256:") {
		return ""
	}
	return reference.Repository(name)
}

// Addon turns a tree into an unpacked add-on with a derived config that
// records where it came from.
func (t *Tree) Addon() (*unpack.Addon, error) {
	id, err := identity(t.FS)
	if err != nil {
		return nil, err
	}
	kind, err := addon.KindOf(t.FS)
	if err != nil {
		return nil, err
	}
	cfg := &addon.Config{
		SpecVersion: mediatypes.SpecVersion,
		Name:        t.Name,
		Kind:        kind,
		ContentRoot: "/",
		Source:      t.Source,
		Revision:    t.Revision,
		Identity:    id,
		Inventory:   addon.Inventory{Objects: []addon.Object{}},
	}
	if !t.Time.IsZero() {
		cfg.Created = t.Time.UTC().Format(time.RFC3339)
	}
	return &unpack.Addon{
		FS:         t.FS,
		Form:       FormFolder,
		Derived:    true,
		Identity:   id,
		Digest:     t.Digest,
		ContentDir: t.ContentDir,
		Config:     cfg,
		Pinned:     t.Pinned,
	}, nil
}

// location is the location that opened a, or the core kind of its Ref.
func (a *Artifact) location() Location {
	if a.loc != nil {
		return a.loc
	}
	return Options{}.location(a.Ref.Kind)
}
