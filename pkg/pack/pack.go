package pack

import (
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Format is the form of an add-on.
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

// Options lay a tree out. Created is the time of every entry and of the
// config, whole seconds in UTC.
type Options struct {
	Format      Format
	Compression mediatypes.Compression
	Created     time.Time
	// Labels are extra image config labels (image form only).
	Labels map[string]string
	// Annotations are extra manifest annotations.
	Annotations map[string]string
}

// Layer writes fsys as the one content layer of opts.Format: the tree
// under addon/ for the image form, at the root for the artifact form.
func Layer(fsys fs.FS, opts Options) (*archive.Layer, error) {
	if opts.Format == FormatArtifact {
		return archive.BuildLayer(fsys, archive.TarOptions{ModTime: opts.Created},
			opts.Compression, mediatypes.ContentLayer(opts.Compression))
	}
	return archive.BuildLayer(fsys, archive.TarOptions{
		Prefix:  strings.TrimPrefix(mediatypes.DefaultContentDir, "/"),
		ModTime: opts.Created,
	}, opts.Compression, mediatypes.ImageLayer(opts.Compression))
}

// Assemble makes the add-on of opts.Format from its content layer (Layer)
// and config, whose ContentRoot and Identity it sets.
func Assemble(layer *archive.Layer, cfg *addon.Config, opts Options) (v1.Image, error) {
	switch opts.Format {
	case FormatImage:
		return buildImage(layer, cfg, opts, opts.Created)
	case FormatArtifact:
		return buildArtifact(layer, cfg, opts)
	}
	return nil, fmt.Errorf("unknown format %q (want %q or %q)", opts.Format, FormatImage, FormatArtifact)
}

// CheckName keeps names usable as labels and file names.
func CheckName(name string) error {
	if strings.ContainsAny(name, "\x00\n\r/") || len(name) > 253 {
		return fmt.Errorf("invalid add-on name %q: no slashes or control characters, at most 253 bytes", name)
	}
	return nil
}

// Annotations are the manifest annotations both forms carry, with extra
// on top.
func Annotations(cfg *addon.Config, extra map[string]string) map[string]string {
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
