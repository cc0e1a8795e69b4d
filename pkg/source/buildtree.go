package source

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// BuildTree is what a build packages (ReadTree).
type BuildTree struct {
	// FS is the add-on tree, read the way folder.LoadDir reads a folder.
	// A local folder is listed on disk (folder.Open): its files are read
	// from it when the tree is, so a build holds the folder's shape, not
	// its bytes. Any other source's tree is in memory.
	FS fs.FS
	// Name is the default add-on name (the folder's, the file's without
	// its extension, the archive's, repository's or subdirectory's).
	Name string
	// Source, Revision and Time are where the tree came from: a remote
	// source's URL and commit, or the remote, commit and commit time of
	// the git work tree a local path is in.
	Source   string
	Revision string
	Time     time.Time

	closer io.Closer
}

// Close releases the folder of a local source; reading FS fails after.
func (t *BuildTree) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}

// ReadTree reads what a build packages: PATH is "-" (a YAML stream read
// from stdin), an http, git or file:// SOURCE, or else always a local
// folder or file (a bare name is a path here, never a store name). A
// local folder is listed, not read (folder.Open): close the BuildTree
// when done with it. A local path in a git work tree that is exactly
// what HEAD holds there gets the work tree's remote, and the last commit
// that changed it and its commit time, as its Source, Revision and Time,
// when opts.Locations has a WorkTreeReader (pkg/source/git's); any other
// local path gets none. Its Name is the folder's name, or the file's
// without its extension.
func ReadTree(ctx context.Context, path string, stdin io.Reader, opts Options, limits safetree.Limits) (*BuildTree, error) {
	if path == "-" {
		fsys, err := folder.LoadReader("stdin.yaml", stdin)
		if err != nil {
			return nil, err
		}
		return &BuildTree{FS: fsys, Name: "addon"}, nil
	}
	if isRemote(path) {
		ref, err := opts.Parse(path)
		if err != nil {
			return nil, err
		}
		t, err := LoadTree(ctx, ref, opts, limits)
		if err != nil {
			return nil, err
		}
		return &BuildTree{FS: t.FS, Name: t.Name, Source: t.Source, Revision: t.Revision, Time: t.Time}, nil
	}
	p := strings.TrimPrefix(path, "file://")
	bt := &BuildTree{Name: filepath.Base(absPath(p))}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		tree, err := folder.Open(p, limits)
		if err != nil {
			return nil, err
		}
		bt.FS, bt.closer = tree, tree
	} else {
		t, err := LoadTree(ctx, Ref{Kind: KindDir, Path: p}, opts, limits)
		if err != nil {
			return nil, err
		}
		bt.FS = t.FS
		bt.Name = strings.TrimSuffix(bt.Name, filepath.Ext(bt.Name))
	}
	// The stamp is the last commit that changed the folder, and only
	// when the folder is what that commit holds: a folder in another
	// project's repository, or one with changes, gets none, so its
	// digest does not move with commits that are not its own.
	for _, l := range opts.Locations {
		if wr, ok := l.(WorkTreeReader); ok {
			if info, err := wr.ReadWorkTree(p, bt.FS); err == nil && info != nil {
				bt.Source, bt.Revision, bt.Time = info.URL, info.Commit, info.Time
			}
			break
		}
	}
	return bt, nil
}

// isRemote reports whether a build PATH is an http or git SOURCE.
func isRemote(s string) bool {
	for _, p := range []string{"https://", "http://", "git+"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
