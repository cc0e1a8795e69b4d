package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Options say what Build reads, how it builds, and where it writes. The
// zero value builds PATH in the image form and tags it NAME:latest in the
// store at layout.DefaultDir.
type Options struct {
	// Build describes the add-on. An empty Name is the tree's
	// (source.BuildTree.Name); empty Source and Revision and a zero
	// Created come from where the tree is (build.Options.WithProvenance).
	// With a Base, Format is the base's, and Name, Version, Description,
	// Source and Revision override the base's only when set.
	Build build.Options
	// Tree reads PATH: its Registry, Timeout, MaxDownloadBytes and
	// Locations (git, https).
	Tree source.Options
	// Stdin is the YAML stream of PATH "-".
	Stdin io.Reader

	// Base, unless its Kind is empty, is the built add-on PATH patches (a
	// store name, a registry reference, oci:DIR...), read with
	// BaseSource; its form is kept. A tree source is refused (ErrNotBuilt).
	Base       source.Ref
	BaseSource source.Options
	// BasePlatform picks the platform's image when the Base is an index
	// of several; without it such a Base is refused (ErrPlatformsBase).
	// The patch is of that one image: the other platforms are not kept.
	// A Base that is one image whose config names another platform is
	// refused (unpack.ErrNoPlatform).
	BasePlatform *v1.Platform
	// Deletes are paths of the base's tree to remove
	// (build.PatchOptions.Deletes); with them, PATH may be an empty
	// folder. Layered keeps an artifact base's layers
	// (build.PatchOptions.Layered). Both need a Base (ErrNeedsBase).
	Deletes []string
	Layered bool

	// Tags are the add-on's names in the local store, NAME[:TAG] or
	// REGISTRY/REPO[:TAG] (source.StoreName). With neither Tags nor
	// Outputs, the add-on is named NAME:VERSION (NAME:latest without a
	// version): a build always lands somewhere.
	Tags []string
	// Store opens the local store, when a name is written; nil opens the
	// one at layout.DefaultDir.
	Store func() (*layout.Store, error)
	// Outputs are more destinations (CheckOutput): oci:DIR[:TAG],
	// oci-archive:FILE[:TAG], docker-archive:FILE[:REFERENCE].
	Outputs []source.Ref
}

// Result is a built and written add-on.
type Result struct {
	*build.Result
	// Tags are the names written to the local store, each with its tag
	// (coredns:latest).
	Tags []string
	// DefaultTag reports that Tags holds the one default name: neither
	// Tags nor Outputs were given.
	DefaultTag bool
	// Flux are build.FluxWarnings of the image: what Flux would not
	// read as its writer meant.
	Flux []string
}

var (
	// ErrNeedsBase marks Deletes or Layered without a Base: only a
	// patch deletes files of another add-on or has layers to keep.
	ErrNeedsBase = errors.New("only a patch of a built add-on deletes its files or keeps its layers")
	// ErrNotBuilt marks a Base that is a tree source, not a built add-on.
	ErrNotBuilt = errors.New("want a built add-on (a store name, REGISTRY/REPO:TAG, oci:DIR...)")
	// ErrOutputKind and ErrOutputForm mark an output destination a
	// build does not write (CheckOutput).
	ErrOutputKind = errors.New("want oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE]")
	ErrOutputForm = errors.New("docker-archive holds only the image form")
	// ErrPlatformsBase marks a Base that is an index of several
	// platforms: the patch would be of the building machine's platform
	// alone (so its digest would depend on that machine), and the
	// other platforms would be dropped without a word.
	ErrPlatformsBase = errors.New("the base is an index of several platforms: a patch keeps one: name the platform, or give its manifest by its digest")
)

// BaseError is a problem of the base add-on: Path is what was built,
// Base the base as written.
type BaseError struct {
	Path string
	Base string
	Err  error
}

func (e *BaseError) Error() string {
	return fmt.Sprintf("build %s: base %s: %v", e.Path, e.Base, e.Err)
}

func (e *BaseError) Unwrap() error { return e.Err }

// CheckOutput refuses a destination that a build of the form f is not
// written to (ErrOutputKind, ErrOutputForm): a build writes oci:,
// oci-archive: and docker-archive:, the last in the image form only.
func CheckOutput(ref source.Ref, f pack.Format) error {
	switch ref.Kind {
	case source.KindLayout, source.KindArchive:
	case source.KindDockerArchive:
		if f != pack.FormatImage && f != "" {
			return ErrOutputForm
		}
	default:
		return ErrOutputKind
	}
	return nil
}

// Build builds the add-on at path (source.ReadTree: "-" reads
// opts.Stdin) as opts say, writes it to opts.Tags in the local store and
// to opts.Outputs, and returns it. Errors of the base are *BaseError;
// nothing is written unless the build succeeds.
func Build(ctx context.Context, path string, opts Options) (*Result, error) {
	patch := opts.Base.Kind != ""
	for _, d := range opts.Outputs {
		f := opts.Build.Format
		if patch {
			// The base's form, known once it is open: source.Write
			// refuses what a docker-archive cannot hold.
			f = pack.FormatImage
		}
		if err := CheckOutput(d, f); err != nil {
			return nil, fmt.Errorf("output %s: %w", d, err)
		}
	}
	if !patch && (len(opts.Deletes) > 0 || opts.Layered) {
		return nil, ErrNeedsBase
	}
	for _, t := range opts.Tags {
		// Before the build, not after it.
		if _, err := source.StoreName(t); err != nil {
			return nil, fmt.Errorf("invalid tag %w", err)
		}
	}
	fsys, bopts, closeTree, err := readTree(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	defer closeTree()
	var res *build.Result
	if patch {
		var closeBase func() error
		res, closeBase, err = patchBase(ctx, path, fsys, bopts, opts)
		if closeBase != nil {
			defer closeBase()
		}
		if be := (*BaseError)(nil); errors.As(err, &be) {
			return nil, err
		}
	} else {
		res, err = build.Build(ctx, fsys, bopts)
	}
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", path, err)
	}
	return write(ctx, res, opts)
}

// readTree reads path and fills what the options leave to the tree: its
// name (without a base) and its provenance. A patch that only deletes
// may have an empty folder.
func readTree(ctx context.Context, path string, opts Options) (fs.FS, build.Options, func() error, error) {
	none := func() error { return nil }
	bopts := opts.Build
	tree, err := source.ReadTree(ctx, path, opts.Stdin, opts.Tree, safetree.Limits{})
	switch {
	case err == nil:
		if bopts.Name == "" && opts.Base.Kind == "" {
			bopts.Name = tree.Name
		}
		prov := build.Provenance{Source: tree.Source, Revision: tree.Revision, Time: tree.Time}
		if bopts, err = bopts.WithProvenance(prov); err != nil {
			tree.Close()
			return nil, bopts, none, err
		}
		return tree.FS, bopts, tree.Close, nil
	case opts.Base.Kind != "" && len(opts.Deletes) > 0 && errors.Is(err, folder.ErrEmpty):
		bopts, err = bopts.WithProvenance(build.Provenance{})
		return filetree.NewBuilder().FS(), bopts, none, err
	}
	return nil, bopts, none, err
}

// patchBase opens the base and puts fsys on top of it (build.Patch). The
// closer releases the base (an oci-archive stays open until the result
// is written): call it when done.
func patchBase(ctx context.Context, path string, fsys fs.FS, bopts build.Options, opts Options) (*build.Result, func() error, error) {
	base := opts.Base
	if source.IsTree(base.Kind) {
		return nil, nil, &BaseError{Path: path, Base: base.String(), Err: fmt.Errorf("%w, not a %s source", ErrNotBuilt, base.Kind)}
	}
	art, err := source.Open(ctx, base, opts.BaseSource)
	if err != nil {
		return nil, nil, err
	}
	img := art.Image
	if art.Index != nil {
		have, err := unpack.Platforms(art.Index)
		if err != nil {
			return nil, art.Close, &BaseError{Path: path, Base: base.String(), Err: err}
		}
		if len(have) > 1 && opts.BasePlatform == nil {
			return nil, art.Close, &BaseError{Path: path, Base: base.String(), Err: fmt.Errorf("%w (it has %s)", ErrPlatformsBase, strings.Join(have, ", "))}
		}
		if img, err = unpack.SelectImage(art.Index, opts.BasePlatform); err != nil {
			return nil, art.Close, &BaseError{Path: path, Base: base.String(), Err: err}
		}
	} else if err := isPlatform(img, opts.BasePlatform); err != nil {
		return nil, art.Close, &BaseError{Path: path, Base: base.String(), Err: err}
	}
	// What the user gave overrides the base; what the tree's provenance
	// filled in does not.
	popts := build.PatchOptions{
		Deletes: opts.Deletes, Created: bopts.Created, Compression: bopts.Compression,
		Name: bopts.Name, Version: bopts.Version, Description: bopts.Description,
		Source: opts.Build.Source, Revision: opts.Build.Revision,
		Labels: bopts.Labels, Annotations: bopts.Annotations,
		NoValidate: bopts.NoValidate, AllowRemote: bopts.AllowRemote, MaxMappingKeys: bopts.MaxMappingKeys,
		MaxKustomizeObjects: bopts.MaxKustomizeObjects, MaxPatchTargets: bopts.MaxPatchTargets,
		Layered: opts.Layered,
	}
	res, err := build.Patch(ctx, img, fsys, popts)
	if err != nil {
		return nil, art.Close, &BaseError{Path: path, Base: base.String(), Err: err}
	}
	return res, art.Close, nil
}

// isPlatform refuses an image whose config names another platform than
// want, so that a platform asked for is not silently ignored when the
// base is one image, not an index (ggcr's remote.Image ignores it). A
// config that names none (an artifact's, an image FROM scratch built
// without one) is of any platform.
func isPlatform(img v1.Image, want *v1.Platform) error {
	if want == nil {
		return nil
	}
	cf, err := img.ConfigFile()
	if err != nil || cf.OS == "" && cf.Architecture == "" {
		return nil
	}
	have := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, OSVersion: cf.OSVersion}
	if have.Satisfies(*want) {
		return nil
	}
	return fmt.Errorf("%w: the base is one image, of %s, not %s", unpack.ErrNoPlatform, safetree.Sanitize(have.String()), want.String())
}

// write writes res under its names in the store and to the outputs.
func write(ctx context.Context, res *build.Result, opts Options) (*Result, error) {
	out := &Result{Result: res, Flux: build.FluxWarnings(res.Image)}
	tags := opts.Tags
	if len(tags) == 0 && len(opts.Outputs) == 0 {
		tags, out.DefaultTag = []string{DefaultTag(res.Config.Name, res.Config.Version)}, true
	}
	for _, t := range tags {
		name, err := source.StoreName(t)
		if err != nil {
			return nil, fmt.Errorf("invalid tag %w", err)
		}
		out.Tags = append(out.Tags, name)
	}
	art := &source.Artifact{Image: res.Image, Digest: res.Digest}
	if len(out.Tags) > 0 {
		open := opts.Store
		if open == nil {
			open = defaultStore
		}
		st, err := open()
		if err != nil {
			return nil, err
		}
		if _, err := st.WriteImage(ctx, res.Image, nil, out.Tags...); err != nil {
			return nil, fmt.Errorf("write to store %s: %w", st.Dir(), err)
		}
	}
	// Each destination is written whole or not at all, one after the
	// other: a failure says which were written before it.
	done := slices.Clone(out.Tags)
	for _, d := range opts.Outputs {
		if _, err := source.Write(ctx, art, d, source.Options{}); err != nil {
			if len(done) > 0 {
				return nil, fmt.Errorf("%w (written before it: %s)", err, strings.Join(done, ", "))
			}
			return nil, err
		}
		done = append(done, d.String())
	}
	return out, nil
}

// DefaultTag is the name an add-on gets when none is asked for:
// NAME:VERSION, else NAME:latest.
func DefaultTag(name, version string) string {
	if version == "" {
		version = reference.DefaultTag
	}
	return name + ":" + version
}

func defaultStore() (*layout.Store, error) {
	dir, err := layout.DefaultDir()
	if err != nil {
		return nil, err
	}
	return layout.InitOnWrite(dir)
}
