package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/folder"
)

// dirLocation is a local folder or manifest file: a path written as one
// (./x, ../x, /x, ., ..), file://PATH, an existing manifest file, or an
// existing path that is no reference (see parseByLook).
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

func (dirLocation) LoadTree(ctx context.Context, ref Ref, opts Options, limits Limits) (*Tree, error) {
	fsys, err := folder.Load(ref.Path, limits)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(filepath.Clean(absPath(ref.Path)))
	name = strings.TrimSuffix(name, filepath.Ext(name))
	return &Tree{Ref: ref, FS: fsys, Name: name, ContentDir: ref.Path}, nil
}

// exists reports whether p exists (a folder named like another kind's
// syntax, git+x, is still a folder).
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
