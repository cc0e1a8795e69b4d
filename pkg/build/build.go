package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// packOptions are what pack needs of opts.
func (o Options) packOptions(created time.Time) pack.Options {
	return pack.Options{Format: o.Format, Compression: o.Compression, Created: created, Labels: o.Labels, Annotations: o.Annotations}
}

// Options describe the add-on being built. The zero value builds a gzip
// image-form add-on named "addon" with the Unix epoch as its time.
type Options struct {
	Format      pack.Format
	Name        string
	Version     string
	Description string
	// Source and Revision record where the tree came from.
	Source   string
	Revision string
	// Created is the time of every entry and of the config; zero means
	// the Unix epoch. See CreatedFromEnv.
	Created time.Time
	// Labels are extra image config labels (image form only).
	Labels map[string]string
	// Annotations are extra manifest annotations.
	Annotations map[string]string
	// Compression of the content layer; empty means gzip.
	Compression mediatypes.Compression
	// NoValidate skips parsing and rendering; the inventory stays empty.
	NoValidate bool
	// AllowRemote lets a kustomization load remote resources at validation.
	AllowRemote bool
	// MaxMappingKeys caps the keys of one YAML mapping in a kustomize
	// tree at validation (render.Options.MaxMappingKeys); 0 means the
	// default.
	MaxMappingKeys int
	// MaxKustomizeObjects and MaxPatchTargets cap what a kustomize tree
	// makes kustomize do at validation (render.Options'); 0 means the
	// default.
	MaxKustomizeObjects, MaxPatchTargets int
}

// Result is a built add-on.
type Result struct {
	// Image is the manifest, config and layer, ready to write anywhere.
	Image v1.Image
	// Config is the add-on config it carries.
	Config *addon.Config
	// Digest is the manifest digest.
	Digest v1.Hash
	// Warnings are the renderer's (render.Result.Warnings), one line
	// each: kustomize's deprecated fields, for instance.
	Warnings []string
}

// ErrValidation marks a tree that does not render.
var ErrValidation = errors.New("validation failed")

// ErrNoObjects marks a tree that renders to no Kubernetes object (a
// folder of READMEs, a file that is not a manifest): an add-on installs
// something, and kubectl apply refuses nothing to apply. It wraps into
// ErrValidation.
var ErrNoObjects = errors.New("no Kubernetes object: manifests are .yaml, .yml or .json files, or a kustomization")

// Build packages the tree fsys. The tree is validated first (every
// document parses and is a Kubernetes object, a kustomization renders
// offline) unless opts.NoValidate is set.
func Build(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	if opts.Format == "" {
		opts.Format = pack.FormatImage
	}
	if _, err := pack.ParseFormat(string(opts.Format)); err != nil {
		return nil, err
	}
	if opts.Compression == "" {
		opts.Compression = mediatypes.Gzip
	}
	if _, err := archive.ParseCompression(string(opts.Compression)); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "addon"
	}
	if err := pack.CheckName(opts.Name); err != nil {
		return nil, err
	}
	created := opts.Created.UTC().Truncate(time.Second)
	if opts.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}

	kind, err := addon.KindOf(fsys)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrValidation, err)
	}
	// The layer (tar, compress, digest) does not depend on the inventory:
	// it is built while the tree renders.
	type built struct {
		layer *archive.Layer
		err   error
	}
	layerc := make(chan built, 1)
	go func() {
		l, err := pack.Layer(fsys, opts.packOptions(created))
		layerc <- built{l, err}
	}()
	inv := addon.Inventory{Objects: []addon.Object{}}
	var warnings []string
	if !opts.NoValidate {
		// Only the inventory is kept: the documents' text is let go as
		// each file is parsed (a folder's tree is not in memory).
		res, err := render.Render(ctx, fsys, render.Options{Kind: kind, AllowRemote: opts.AllowRemote, MaxMappingKeys: opts.MaxMappingKeys, MaxKustomizeObjects: opts.MaxKustomizeObjects, MaxPatchTargets: opts.MaxPatchTargets, DropText: true})
		if err != nil {
			<-layerc
			return nil, fmt.Errorf("%w: %w", ErrValidation, err)
		}
		inv, warnings = res.Inventory(), res.Warnings
		if len(inv.Objects) == 0 {
			<-layerc
			return nil, fmt.Errorf("%w: %w", ErrValidation, ErrNoObjects)
		}
		if err := checkValues(ctx, fsys, render.Options{Kind: kind, AllowRemote: opts.AllowRemote, MaxMappingKeys: opts.MaxMappingKeys, MaxKustomizeObjects: opts.MaxKustomizeObjects, MaxPatchTargets: opts.MaxPatchTargets, DropText: true}); err != nil {
			<-layerc
			return nil, fmt.Errorf("%w: %w", ErrValidation, err)
		}
	}
	b := <-layerc
	if b.err != nil {
		return nil, fmt.Errorf("build layer: %w", b.err)
	}

	cfg := &addon.Config{
		SpecVersion: mediatypes.SpecVersion,
		Name:        opts.Name,
		Version:     opts.Version,
		Description: opts.Description,
		Kind:        kind,
		Source:      opts.Source,
		Revision:    opts.Revision,
		Created:     created.Format(time.RFC3339),
		Inventory:   inv,
	}
	img, err := pack.Assemble(b.layer, cfg, opts.packOptions(created))
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Result{Image: img, Config: cfg, Digest: d, Warnings: warnings}, nil
}

// checkValues refuses a tree whose values declaration (.addonvalues) is
// invalid, or whose documents refer to a value it does not declare or
// break once values are filled in: what an installer would find out
// only when it installs. It renders once more with each required value
// given as a stand-in, and only for a tree that declares values. Each
// value has a stand-in of its own (x1, x2...): with one for all, two
// objects named by two values would be one object, refused as a
// duplicate.
func checkValues(ctx context.Context, fsys fs.FS, ropts render.Options) error {
	decl, err := values.Load(fsys)
	if err != nil || decl == nil {
		return err
	}
	ropts.Values = map[string]string{}
	for i, v := range decl.Values {
		if v.Default == nil {
			ropts.Values[v.Name] = "x" + strconv.Itoa(i+1)
		}
	}
	if _, err := render.Render(ctx, fsys, ropts); err != nil {
		return fmt.Errorf("with its values filled in: %w", err)
	}
	return nil
}
