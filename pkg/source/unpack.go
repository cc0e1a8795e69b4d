package source

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// FormFolder is the form of an add-on read from a plain folder.
const FormFolder mediatypes.Form = "folder"

// Unpack resolves any SOURCE to its add-on tree and metadata.
func Unpack(ctx context.Context, ref Ref, opts Options, uopts unpack.Options) (*unpack.Addon, error) {
	if ref.Kind == KindDir {
		return unpackDir(ref)
	}
	a, err := Open(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var ad *unpack.Addon
	if a.Index != nil {
		ad, err = unpack.Index(ctx, a.Index, uopts)
	} else {
		ad, err = unpack.Image(ctx, a.Image, uopts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return ad, nil
}

// unpackDir reads a folder the way build does.
func unpackDir(ref Ref) (*unpack.Addon, error) {
	fsys, err := build.LoadDir(ref.Path)
	if err != nil {
		return nil, err
	}
	id, err := archive.Identity(fsys)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(filepath.Clean(absPath(ref.Path)))
	name = strings.TrimSuffix(name, filepath.Ext(name))
	return &unpack.Addon{
		FS:         fsys,
		Form:       FormFolder,
		Derived:    true,
		Identity:   id.String(),
		ContentDir: ref.Path,
		Config: &addon.Config{
			SpecVersion: mediatypes.SpecVersion,
			Name:        name,
			Kind:        render.DetectKind(fsys),
			ContentRoot: "/",
			Identity:    id.String(),
			Inventory:   addon.Inventory{Objects: []addon.Object{}},
		},
	}, nil
}
