package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// Format is the form a build produces.
type Format string

// The two forms.
const (
	FormatImage    Format = "image"
	FormatArtifact Format = "artifact"
)

// ParseFormat parses the name of a form ("image" or "artifact").
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatImage, FormatArtifact:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want %q or %q)", s, FormatImage, FormatArtifact)
}

// Options describe the add-on being built. The zero value builds a gzip
// image-form add-on named "addon" with the Unix epoch as its time.
type Options struct {
	Format      Format
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

// Build packages the tree fsys. The tree is validated first (every
// document parses and is a Kubernetes object, a kustomization renders
// offline) unless opts.NoValidate is set.
func Build(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	if opts.Format == "" {
		opts.Format = FormatImage
	}
	if _, err := ParseFormat(string(opts.Format)); err != nil {
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
	if err := checkName(opts.Name); err != nil {
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
		l, err := contentLayer(fsys, opts, created)
		layerc <- built{l, err}
	}()
	inv := addon.Inventory{Objects: []addon.Object{}}
	var warnings []string
	if !opts.NoValidate {
		// Only the inventory is kept: the documents' text is let go as
		// each file is parsed (a folder's tree is not in memory).
		res, err := render.Render(ctx, fsys, render.Options{Kind: kind, AllowRemote: opts.AllowRemote, DropText: true})
		if err != nil {
			<-layerc
			return nil, fmt.Errorf("%w: %w", ErrValidation, err)
		}
		inv, warnings = res.Inventory(), res.Warnings
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
	var img v1.Image
	switch opts.Format {
	case FormatImage:
		img, err = buildImage(b.layer, cfg, opts, created)
	case FormatArtifact:
		img, err = buildArtifact(b.layer, cfg, opts)
	}
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Result{Image: img, Config: cfg, Digest: d, Warnings: warnings}, nil
}

// contentLayer writes the tree as the one layer of the chosen form.
func contentLayer(fsys fs.FS, opts Options, created time.Time) (*archive.Layer, error) {
	if opts.Format == FormatArtifact {
		return archive.BuildLayer(fsys, archive.TarOptions{ModTime: created},
			opts.Compression, mediatypes.ContentLayer(opts.Compression))
	}
	return archive.BuildLayer(fsys, archive.TarOptions{
		Prefix:  strings.TrimPrefix(mediatypes.DefaultContentDir, "/"),
		ModTime: created,
	}, opts.Compression, mediatypes.ImageLayer(opts.Compression))
}

// checkName keeps names usable as labels and file names.
func checkName(name string) error {
	if strings.ContainsAny(name, "\x00\n\r/") || len(name) > 253 {
		return fmt.Errorf("invalid add-on name %q: no slashes or control characters, at most 253 bytes", name)
	}
	return nil
}

// annotations are the manifest annotations both forms carry.
func annotations(cfg *addon.Config, extra map[string]string) map[string]string {
	a := map[string]string{
		mediatypes.AnnotationTitle:   cfg.Name,
		mediatypes.AnnotationCreated: cfg.Created,
		mediatypes.LabelSpec:         mediatypes.SpecVersion,
		mediatypes.LabelName:         cfg.Name,
		mediatypes.LabelKind:         string(cfg.Kind),
		mediatypes.LabelIdentity:     cfg.Identity,
	}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(mediatypes.AnnotationVersion, cfg.Version)
	set(mediatypes.LabelVersion, cfg.Version)
	set(mediatypes.AnnotationDescription, cfg.Description)
	set(mediatypes.AnnotationSource, cfg.Source)
	set(mediatypes.AnnotationRevision, cfg.Revision)
	maps.Copy(a, extra)
	return a
}
