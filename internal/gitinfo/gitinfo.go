// Package gitinfo reads, in pure Go, what a build records of the git work
// tree its source sits in: the remote URL, and the commit that last
// changed the source, with its time, when the source is exactly what
// that commit holds.
package gitinfo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Info is what a build records.
type Info struct {
	// URL of the "origin" remote, credentials removed; empty without one.
	URL string
	// Commit is the hash of the last commit that changed the source.
	Commit string
	// Time is that commit's committer time.
	Time time.Time
}

// Read returns the info of the source at path (a folder or a file) in
// the git work tree holding it (a main work tree or one made by "git
// worktree add"), or nil, nil when there is none to record, which is
// when:
//   - path is not inside a work tree, or HEAD names no commit yet;
//   - HEAD does not hold path (an untracked folder in someone else's
//     repository);
//   - the source is not what HEAD holds: tree is the tree the build
//     packages (path's files after the ignore rules), and every file of
//     it must be in HEAD with the same bytes and execute bit, every
//     directory must hold a file of HEAD, and every file HEAD holds under
//     path must be in tree or on disk (a file the ignore rules leave out
//     is on disk; a deleted one is not). A link or a submodule in HEAD
//     is never what tree holds. tree is ignored when path is a file:
//     the file on disk is compared.
//
// The commit is not HEAD but the last commit that changed path: going
// back from HEAD along first parents, the oldest one that holds path
// exactly as HEAD does. A commit elsewhere in the repository does not
// change what is recorded, so the same source gives the same build (in
// a shallow clone, the walk stops at the oldest commit present).
func Read(path string, tree fs.FS) (*Info, error) {
	repo, err := git.PlainOpenWithOptions(path, &git.PlainOpenOptions{
		DetectDotGit: true,
		// A linked work tree keeps its objects and remotes in the main
		// repository's .git, which its own names in "commondir".
		EnableDotGitCommonDir: true,
	})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository of %s: %w", path, err)
	}
	wt, err := repo.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git work tree of %s: %w", path, err)
	}
	prefix, ok := relative(wt.Filesystem.Root(), path)
	if !ok {
		return nil, nil
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil // no commits yet
	}
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", path, err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", path, err)
	}
	held, err := entryAt(c, prefix)
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", path, err)
	}
	if held == nil {
		return nil, nil // untracked
	}
	clean, err := isClean(repo, held, path, tree)
	if err != nil {
		return nil, fmt.Errorf("compare %s with HEAD: %w", path, err)
	}
	if !clean {
		return nil, nil
	}
	if c, err = lastChange(repo, c, prefix, *held); err != nil {
		return nil, fmt.Errorf("find the last commit that changed %s: %w", path, err)
	}
	info := &Info{Commit: c.Hash.String(), Time: c.Committer.When.UTC()}
	if r, err := repo.Remote("origin"); err == nil && len(r.Config().URLs) > 0 {
		info.URL = redact(r.Config().URLs[0])
	}
	return info, nil
}

// relative is path's slash path inside the work tree at root ("" for
// the root itself), or false when it is outside.
func relative(root, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// entryAt is what commit c holds at prefix (its root tree for ""), or
// nil when it holds nothing there.
func entryAt(c *object.Commit, prefix string) (*object.TreeEntry, error) {
	root, err := c.Tree()
	if err != nil {
		return nil, err
	}
	if prefix == "" {
		return &object.TreeEntry{Mode: filemode.Dir, Hash: root.Hash}, nil
	}
	e, err := root.FindEntry(prefix)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrFileNotFound) {
		return nil, nil
	}
	return e, err
}

// lastChange walks back from c along first parents while the parent
// holds prefix as held, and returns the last commit reached.
func lastChange(repo *git.Repository, c *object.Commit, prefix string, held object.TreeEntry) (*object.Commit, error) {
	for c.NumParents() > 0 {
		p, err := repo.CommitObject(c.ParentHashes[0])
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return c, nil // a shallow clone's boundary
		}
		if err != nil {
			return nil, err
		}
		e, err := entryAt(p, prefix)
		if err != nil {
			return nil, err
		}
		if e == nil || e.Hash != held.Hash || e.Mode != held.Mode {
			return c, nil
		}
		c = p
	}
	return c, nil
}

// isClean reports whether the source is what held (HEAD's entry at its
// path) is; see Read.
func isClean(repo *git.Repository, held *object.TreeEntry, path string, tree fs.FS) (bool, error) {
	if held.Mode != filemode.Dir {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			return false, err
		}
		f, err := os.Open(path)
		if err != nil {
			return false, err
		}
		defer f.Close()
		return sameBlob(held, f, st.Size(), st.Mode()&0o111 != 0)
	}
	if tree == nil {
		return false, nil
	}
	t, err := repo.TreeObject(held.Hash)
	if err != nil {
		return false, err
	}
	files := map[string]object.TreeEntry{}
	dirs := map[string]bool{".": true}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, err
		}
		switch e.Mode {
		case filemode.Dir:
			continue
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
		default:
			return false, nil // a link or a submodule: never what tree holds
		}
		files[name] = e
		for d := name; d != "."; {
			d = filepathDir(d)
			dirs[d] = true
		}
	}
	seen := 0
	clean := true
	err = fs.WalkDir(tree, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if !dirs[name] {
				clean = false // a directory that holds no file of HEAD
				return fs.SkipAll
			}
			return nil
		}
		e, ok := files[name]
		if !ok || !d.Type().IsRegular() {
			clean = false
			return fs.SkipAll
		}
		seen++
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, err := tree.Open(name)
		if err != nil {
			return err
		}
		same, err := sameBlob(&e, f, info.Size(), info.Mode()&0o111 != 0)
		f.Close()
		if err != nil {
			return err
		}
		if !same {
			clean = false
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if !clean {
		return false, nil
	}
	if seen == len(files) {
		return true, nil
	}
	// HEAD holds files the tree does not: left out by the ignore rules
	// (still on disk), or deleted (not).
	for name := range files {
		if _, err := fs.Stat(tree, name); err == nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(path, filepath.FromSlash(name))); err != nil {
			return false, nil
		}
	}
	return true, nil
}

// filepathDir is path.Dir for the slash paths of a tree.
func filepathDir(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return "."
}

// sameBlob reports whether r (size bytes) is the blob e names, with its
// execute bit.
func sameBlob(e *object.TreeEntry, r io.Reader, size int64, exec bool) (bool, error) {
	if exec != (e.Mode == filemode.Executable) {
		return false, nil
	}
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	n, err := io.Copy(h, r)
	if err != nil {
		return false, err
	}
	return n == size && h.Sum() == e.Hash, nil
}

// redact drops user:password from a URL so it never lands in an image.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
