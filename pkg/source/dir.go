package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// dirLocation is a local folder or manifest file: a path written as one
// (./x, ../x, /x, ., ..), file://PATH, a manifest file name, or what is
// no reference (see Parse).
type dirLocation struct{}

func (dirLocation) Kind() Kind { return KindDir }

func (dirLocation) Claims(s string) bool {
	for _, p := range []string{"file://", "./", "../", "/"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return s == "." || s == ".."
}

func (dirLocation) Parse(s string) (Ref, error) {
	p := strings.TrimPrefix(s, "file://")
	return Ref{Kind: KindDir, Path: p}, nonEmpty(s, p)
}

func (dirLocation) Format(r Ref) string { return r.Path }

func (dirLocation) LoadTree(ctx context.Context, ref Ref, opts Options, limits safetree.Limits) (*Tree, error) {
	fsys, err := folder.Load(ref.Path, limits)
	if err != nil {
		if _, serr := os.Lstat(ref.Path); ref.Bare && errors.Is(serr, fs.ErrNotExist) {
			// A *fs.PathError, as a path that is not there is said
			// (folder.Load), naming it: the CLI names the argument too.
			return nil, &fs.PathError{Op: "read source", Path: ref.Path, Err: fmt.Errorf("%w: neither a reference nor an existing path", ErrBadSource)}
		}
		return nil, err
	}
	name := filepath.Base(filepath.Clean(absPath(ref.Path)))
	name = strings.TrimSuffix(name, filepath.Ext(name))
	return &Tree{Ref: ref, FS: fsys, Name: name, ContentDir: ref.Path}, nil
}
