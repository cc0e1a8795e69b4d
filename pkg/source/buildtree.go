package source

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/gitinfo"
)

// ReadTree reads what a build packages: PATH is "-" (a YAML stream read
// from stdin), an http, git or file:// SOURCE, or else always a local
// folder or file (a bare name is a path here, never a store name). A
// local path in a git work tree gets the work tree's remote, commit and
// commit time as its Source, Revision and Time; its Name is the folder's
// name, or the file's without its extension.
func ReadTree(ctx context.Context, path string, stdin io.Reader, opts Options, limits Limits) (*Tree, error) {
	if path == "-" {
		fsys, err := folder.LoadReader("stdin.yaml", stdin)
		if err != nil {
			return nil, err
		}
		return &Tree{Ref: Ref{Kind: KindDir, Path: path}, FS: fsys, Name: "addon"}, nil
	}
	for _, k := range []Kind{KindHTTP, KindGit} {
		if LocationOf(k).Claims(path) {
			ref, err := Parse(path)
			if err != nil {
				return nil, err
			}
			return LoadTree(ctx, ref, opts, limits)
		}
	}
	ref := Ref{Kind: KindDir, Path: strings.TrimPrefix(path, "file://")}
	t, err := LoadTree(ctx, ref, opts, limits)
	if err != nil {
		return nil, err
	}
	t.Name = filepath.Base(absPath(ref.Path))
	if st, err := os.Stat(ref.Path); err == nil && !st.IsDir() {
		t.Name = strings.TrimSuffix(t.Name, filepath.Ext(t.Name))
	}
	if info, err := gitinfo.Read(ref.Path); err == nil && info != nil {
		t.Source, t.Revision, t.Time = info.URL, info.Commit, info.Time
	}
	return t, nil
}
