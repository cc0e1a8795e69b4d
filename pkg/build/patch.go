package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// PatchOptions describe a patch layer on top of an existing add-on.
type PatchOptions struct {
	// Deletes are slash paths of the base's tree to remove; each must
	// exist. They become whiteouts (.wh. entries) in the new layer.
	Deletes []string
	// Created is the time of the new layer's entries and of the config;
	// zero means the base's created time, else the Unix epoch.
	Created time.Time
	// Compression of the new layer; empty means gzip.
	Compression mediatypes.Compression
	// Name, Version, Description, Source and Revision override the base's
	// values when set.
	Name        string
	Version     string
	Description string
	Source      string
	Revision    string
	// Labels are extra image config labels (image form only).
	Labels map[string]string
	// Annotations are extra manifest annotations.
	Annotations map[string]string
	// NoValidate skips rendering the patched tree; the inventory is then
	// empty, as with Build.
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
	// Unpack bounds reading the base.
	Unpack unpack.Options
	// Layered keeps an artifact-form base's layers and puts the patch in
	// a layer on top. By default a patched artifact is one layer, the
	// flattened tree: Flux reads only an artifact's first layer and oras
	// refuses several layers titled ".", so only a single-layer artifact
	// reads right everywhere. (The image form always keeps its layers,
	// as a Dockerfile FROM does.)
	Layered bool
}

// ErrPatch marks a patch that cannot apply to its base.
var ErrPatch = errors.New("invalid patch")

// Patch puts the files of patch over the add-on base's tree, at the same
// paths of the content tree, and removes opts.Deletes. An image-form base
// gets one layer on top (whiteouts for the deletes); its layers stay as
// they are (same digests, same order), so a registry that holds the base
// stores only the new layer. An artifact-form base becomes a single-layer
// artifact of the patched tree, unless opts.Layered. The config (image form: the
// labels, diff_ids and history; artifact form: the config blob) describes
// the flattened result: its identity, kind and inventory.
func Patch(ctx context.Context, base v1.Image, patch fs.FS, opts PatchOptions) (*Result, error) {
	if patch == nil {
		patch = filetree.NewBuilder().FS()
	}
	if opts.Compression == "" {
		opts.Compression = mediatypes.Gzip
	}
	if _, err := archive.ParseCompression(string(opts.Compression)); err != nil {
		return nil, err
	}
	ad, err := unpack.Image(ctx, base, opts.Unpack)
	if err != nil {
		return nil, fmt.Errorf("read base: %w", err)
	}
	if ad.Form != mediatypes.FormImage && ad.Form != mediatypes.FormArtifact {
		return nil, fmt.Errorf("%w: the base is a %s, not an add-on in the image or artifact form", ErrPatch, ad.Form)
	}
	deletes, err := cleanDeletes(ad.FS, opts.Deletes)
	if err != nil {
		return nil, err
	}
	if err := checkPatchNames(patch); err != nil {
		return nil, err
	}
	merged, err := applyPatch(ad.FS, patch, deletes)
	if err != nil {
		return nil, err
	}
	if merged.Count() == 0 {
		return nil, fmt.Errorf("%w: the patch deletes the whole add-on", ErrPatch)
	}

	created := opts.Created.UTC().Truncate(time.Second)
	if opts.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
		if t, err := time.Parse(time.RFC3339, ad.Config.Created); err == nil {
			created = t.UTC()
		}
	}
	cfg := *ad.Config
	cfg.SpecVersion = mediatypes.SpecVersion
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	override(&cfg.Name, opts.Name)
	override(&cfg.Version, opts.Version)
	override(&cfg.Description, opts.Description)
	override(&cfg.Source, opts.Source)
	override(&cfg.Revision, opts.Revision)
	if cfg.Name == "" {
		cfg.Name = "addon"
	}
	if err := pack.CheckName(cfg.Name); err != nil {
		return nil, err
	}
	cfg.Created = created.Format(time.RFC3339)
	if cfg.Kind, err = addon.KindOf(merged); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrValidation, err)
	}
	cfg.Inventory = addon.Inventory{Objects: []addon.Object{}}
	var warnings []string
	if !opts.NoValidate {
		res, err := render.Render(ctx, merged, render.Options{Kind: cfg.Kind, AllowRemote: opts.AllowRemote, MaxMappingKeys: opts.MaxMappingKeys, MaxKustomizeObjects: opts.MaxKustomizeObjects, MaxPatchTargets: opts.MaxPatchTargets, DropText: true})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrValidation, err)
		}
		cfg.Inventory, warnings = res.Inventory(), res.Warnings
	}
	id, err := archive.Identity(merged)
	if err != nil {
		return nil, err
	}
	cfg.Identity = id.String()

	var img v1.Image
	switch ad.Form {
	case mediatypes.FormImage:
		img, err = patchImage(base, ad, patch, deletes, &cfg, opts, created)
	case mediatypes.FormArtifact:
		if opts.Layered {
			img, err = patchArtifact(base, ad, patch, deletes, &cfg, opts, created)
		} else {
			img, err = squashArtifact(ad, merged, &cfg, opts, created)
		}
	}
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Result{Image: img, Config: &cfg, Digest: d, Warnings: warnings}, nil
}

// cleanDeletes checks each path exists in the base tree and returns them
// cleaned, sorted and unique, so the layer does not depend on flag order.
func cleanDeletes(tree fs.FS, deletes []string) ([]string, error) {
	var out []string
	for _, d := range deletes {
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(d, "./"), "/"))
		if p == "." || !fs.ValidPath(p) {
			return nil, fmt.Errorf("%w: cannot delete %q: want a path inside the add-on tree", ErrPatch, d)
		}
		if _, err := lstat(tree, p); err != nil {
			return nil, fmt.Errorf("%w: cannot delete %q: the base has no such path", ErrPatch, d)
		}
		// A whiteout names a path, it does not follow links: deleting
		// through a symlinked directory would delete nothing.
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if st, err := lstat(tree, dir); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("%w: cannot delete %q: %s is not a directory", ErrPatch, d, dir)
			}
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func lstat(fsys fs.FS, name string) (fs.FileInfo, error) {
	if l, ok := fsys.(fs.ReadLinkFS); ok {
		return l.Lstat(name)
	}
	return fs.Stat(fsys, name)
}

// checkPatchNames refuses what a writer must not produce (spec section 8).
func checkPatchNames(patch fs.FS) error {
	return fs.WalkDir(patch, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if !utf8.ValidString(name) {
			return fmt.Errorf("%w: %q is not valid UTF-8", ErrPatch, name)
		}
		if strings.HasPrefix(d.Name(), ".wh.") {
			return fmt.Errorf("%w: %s: names beginning with .wh. are reserved for whiteouts (use a delete instead)", ErrPatch, name)
		}
		return nil
	})
}

// applyPatch computes in memory what readers get by flattening the base
// plus the patch layer: the base tree, minus the deletes, with the patch's
// entries over it (a directory over a directory keeps its contents,
// anything else replaces what was there).
func applyPatch(base, patch fs.FS, deletes []string) (*filetree.FS, error) {
	b := filetree.NewBuilder()
	if err := copyTree(b, base); err != nil {
		return nil, fmt.Errorf("copy base tree: %w", err)
	}
	for _, d := range deletes {
		b.Remove(d)
	}
	if err := copyTree(b, patch); err != nil {
		return nil, fmt.Errorf("apply patch: %w", err)
	}
	return b.FS(), nil
}

// copyTree writes every entry of fsys into b.
func copyTree(b *filetree.Builder, fsys fs.FS) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return b.Mkdir(name, info.Mode().Perm())
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, name)
			if err != nil {
				return err
			}
			return b.Symlink(target, name)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := filetree.ReadOnly(fsys, name)
			if err != nil {
				return err
			}
			return b.WriteFile(name, data, info.Mode().Perm())
		default:
			return fmt.Errorf("%s: unsupported file type %v", name, t)
		}
	})
}

// patchImage appends the patch layer to an image-form base and updates
// its labels; everything else in the image config is kept.
func patchImage(base v1.Image, ad *unpack.Addon, patch fs.FS, deletes []string, cfg *addon.Config, opts PatchOptions, created time.Time) (v1.Image, error) {
	m, err := base.Manifest()
	if err != nil {
		return nil, err
	}
	docker := string(m.MediaType) == string(mediatypes.DockerManifest)
	mt := mediatypes.ImageLayer(opts.Compression)
	if docker {
		switch opts.Compression {
		case mediatypes.Gzip:
			mt = mediatypes.DockerLayerGzip
		case mediatypes.Zstd:
			mt = mediatypes.DockerLayerZstd
		default:
			return nil, fmt.Errorf("%w: a Docker image has no uncompressed layer type: use gzip or zstd", ErrPatch)
		}
	}
	layer, err := archive.BuildLayer(patch, archive.TarOptions{
		Prefix:    strings.Trim(ad.ContentDir, "/"),
		ModTime:   created,
		Whiteouts: deletes,
	}, opts.Compression, mt)
	if err != nil {
		return nil, fmt.Errorf("build layer: %w", err)
	}
	cfg.ContentRoot = ad.ContentDir
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}

	img, err := pack.AppendLayer(base, layer, created, "addonpkg build --base", "patch of add-on "+cfg.Name)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	ann := pack.Annotations(cfg, opts.Annotations)
	labels := maps.Clone(cf.Config.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	// Every add-on label is rewritten from the new config so that none
	// describes the base; an inherited one the config has no value for
	// (a version the patch does not know) is cleared.
	for _, k := range addonKeys {
		delete(labels, k)
	}
	maps.Copy(labels, ann)
	labels[mediatypes.LabelConfig] = string(cfgJSON)
	if ad.ContentDir != mediatypes.DefaultContentDir {
		labels[mediatypes.LabelContent] = ad.ContentDir
	}
	maps.Copy(labels, opts.Labels)
	cf.Config.Labels = labels
	cf.Created = v1.Time{Time: created}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	if docker {
		return img, nil // Docker manifests carry no annotations
	}
	return mutate.Annotations(img, manifestAnnotations(m.Annotations, ann)).(v1.Image), nil
}

// addonKeys are the labels and annotations that describe the tree and
// are recomputed for a patched add-on.
var addonKeys = []string{
	mediatypes.LabelSpec, mediatypes.LabelName, mediatypes.LabelVersion, mediatypes.LabelKind,
	mediatypes.LabelIdentity, mediatypes.LabelConfig,
	mediatypes.AnnotationTitle, mediatypes.AnnotationVersion, mediatypes.AnnotationDescription,
	mediatypes.AnnotationSource, mediatypes.AnnotationRevision, mediatypes.AnnotationCreated,
}

// manifestAnnotations are the base's annotations with the add-on keys
// replaced by the patched add-on's.
func manifestAnnotations(baseAnn, ann map[string]string) map[string]string {
	out := maps.Clone(baseAnn)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range addonKeys {
		delete(out, k)
	}
	maps.Copy(out, ann)
	return out
}

// squashArtifact makes a new single-layer artifact holding the patched
// tree, as Build would from that tree.
func squashArtifact(ad *unpack.Addon, merged fs.FS, cfg *addon.Config, opts PatchOptions, created time.Time) (v1.Image, error) {
	layer, err := archive.BuildLayer(merged, archive.TarOptions{ModTime: created}, opts.Compression, mediatypes.ContentLayer(opts.Compression))
	if err != nil {
		return nil, fmt.Errorf("build layer: %w", err)
	}
	if got := layer.Tar.Identity.String(); got != cfg.Identity {
		return nil, fmt.Errorf("build layer: the squashed tree's identity is %s, the patched tree's %s", got, cfg.Identity)
	}
	cfg.ContentRoot = "/"
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	return pack.NewArtifact(cfgJSON, []v1.Layer{layer}, manifestAnnotations(ad.Manifest.Annotations, pack.Annotations(cfg, opts.Annotations)))
}

// patchArtifact makes a new artifact: a new config blob, the base's
// layers as they are, and the patch layer on top.
func patchArtifact(base v1.Image, ad *unpack.Addon, patch fs.FS, deletes []string, cfg *addon.Config, opts PatchOptions, created time.Time) (v1.Image, error) {
	layer, err := archive.BuildLayer(patch, archive.TarOptions{
		ModTime:   created,
		Whiteouts: deletes,
	}, opts.Compression, mediatypes.ContentLayer(opts.Compression))
	if err != nil {
		return nil, fmt.Errorf("build layer: %w", err)
	}
	cfg.ContentRoot = "/"
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	layers, err := base.Layers()
	if err != nil {
		return nil, fmt.Errorf("read base layers: %w", err)
	}
	layers = append(layers, layer)
	return pack.NewArtifact(cfgJSON, layers, manifestAnnotations(ad.Manifest.Annotations, pack.Annotations(cfg, opts.Annotations)))
}
