package source

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// FormFolder is the form of an add-on read as a plain tree: a folder, a
// file, an http download or a git commit.
const FormFolder mediatypes.Form = "folder"

// Resolve parses SOURCE and unpacks it: the one call for "any SOURCE to
// its add-on tree and metadata".
func Resolve(ctx context.Context, s string, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	ref, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return Unpack(ctx, ref, opts, uopts)
}

// Unpack resolves any SOURCE to its add-on tree and metadata, with the
// pinned SOURCE of what it read in Addon.Pinned.
func Unpack(ctx context.Context, ref Ref, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	if IsTree(ref.Kind) {
		if opts.Verify != nil {
			return nil, fmt.Errorf("%s: %w: a %s source has no manifest digest to sign", ref, ErrNotVerifiable, ref.Kind)
		}
		t, err := LoadTree(ctx, ref, opts, uopts.Limits)
		if err != nil {
			return nil, err
		}
		return t.Addon()
	}
	a, err := Open(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if uopts.Repository == "" {
		uopts.Repository = a.Repository()
	}
	var ad *unpack.Addon
	for try := 0; ; try++ {
		if a.Index != nil {
			ad, err = unpack.Index(ctx, a.Index, uopts)
		} else {
			ad, err = unpack.Image(ctx, a.Image, uopts)
		}
		// A registry blob that arrived changed or cut short is fetched
		// again (the unpack starts over: it holds nothing on disk).
		if err == nil || try >= 2 || !a.remote || !registry.IsTransient(err) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	ad.Pinned = a.Pinned()
	return ad, nil
}

// Pinned is the SOURCE of exactly this artifact: REGISTRY/REPO@sha256:...,
// NAME@sha256:... in the store, oci:DIR@sha256:...,
// oci-archive:FILE@sha256:...; empty for a docker-archive (which cannot
// name a manifest by digest).
func (a *Artifact) Pinned() string {
	if a.Digest.Hex == "" {
		return ""
	}
	d := a.Digest.String()
	switch a.Ref.Kind {
	case KindRegistry:
		if r, err := name.ParseReference(a.Ref.Name); err == nil {
			return r.Context().Name() + "@" + d
		}
		return repoOf(a.Ref.Name) + "@" + d
	case KindStore:
		return repoOf(a.Ref.Name) + "@" + d
	case KindLayout, KindArchive:
		return string(a.Ref.Kind) + ":" + a.Ref.Path + "@" + d
	}
	return ""
}

// Repository is the repository name the artifact was read under
// (REGISTRY/REPO for a registry, the name for the store, a
// docker-archive's REFERENCE), without tag or digest; "" when the source
// names none.
func (a *Artifact) Repository() string {
	switch a.Ref.Kind {
	case KindRegistry, KindStore, KindDockerArchive:
		if strings.HasPrefix(a.Ref.Name, "sha256:") {
			return ""
		}
		return repoOf(a.Ref.Name)
	}
	return ""
}

// repoOf drops the :TAG or @DIGEST of a name.
func repoOf(name string) string {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return name
}

// Addon turns a tree into an unpacked add-on with a derived config that
// records where it came from.
func (t *Tree) Addon() (*unpack.Addon, error) {
	id, err := identity(t.FS)
	if err != nil {
		return nil, err
	}
	cfg := &addon.Config{
		SpecVersion: mediatypes.SpecVersion,
		Name:        t.Name,
		Kind:        render.DetectKind(t.FS),
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
