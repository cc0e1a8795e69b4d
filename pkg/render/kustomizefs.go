package render

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is what kustomize gets if it tries to write: rendering
// never changes the add-on.
var errReadOnly = errors.New("add-on tree is read-only")

// treeFS shows an fs.FS to kustomize as a read-only filesys.FileSystem
// rooted at "/". kustomize's own in-memory file system refuses common
// names (a "+" in "high-availability-1.21+"), and copying would double the
// memory, so kustomize reads the tree in place. Nothing outside the tree
// exists for it.
type treeFS struct {
	// ctx, when not nil, is the render's: once it ends, every read
	// (Open, ReadFile, ReadDir, Glob, Walk, CleanedAbs) fails with its
	// error. kustomize takes no context, and this is the one way to stop
	// it early: a run whose caller left ends at its next read of the
	// tree (and frees kustomizeMu for the renders waiting), though not
	// in the middle of work between two reads. Exists and IsDir still
	// answer truly: they cannot fail, and a false "no such path" would
	// change what kustomize makes of the path rather than stop it.
	ctx  context.Context
	fsys fs.FS
	// files, read only, are files of fsys already read, by their names
	// in it (kustomizeGraph.content): kustomize reads them from here.
	files map[string][]byte
	// read, when not nil, collects the files kustomize reads (for the
	// warnings about them: kustomizeWarnings).
	read *readFiles
}

var _ filesys.FileSystem = treeFS{}

// rel maps kustomize's absolute (or root-relative) path into the tree.
func rel(p string) string {
	p = filepath.ToSlash(p)
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		return "."
	}
	return r
}

func (t treeFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (t treeFS) Mkdir(string) error                  { return errReadOnly }
func (t treeFS) MkdirAll(string) error               { return errReadOnly }
func (t treeFS) RemoveAll(string) error              { return errReadOnly }
func (t treeFS) WriteFile(string, []byte) error      { return errReadOnly }

// ended is the error of t's context once it has ended, else nil.
func (t treeFS) ended() error {
	if t.ctx == nil {
		return nil
	}
	return t.ctx.Err()
}

func (t treeFS) Open(p string) (filesys.File, error) {
	if err := t.ended(); err != nil {
		return nil, err
	}
	f, err := t.fsys.Open(rel(p))
	if err != nil {
		return nil, err
	}
	return readOnlyFile{f}, nil
}

func (t treeFS) IsDir(p string) bool {
	st, err := fs.Stat(t.fsys, rel(p))
	return err == nil && st.IsDir()
}

func (t treeFS) Exists(p string) bool {
	_, err := fs.Stat(t.fsys, rel(p))
	return err == nil
}

func (t treeFS) ReadDir(p string) ([]string, error) {
	if err := t.ended(); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(t.fsys, rel(p))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (t treeFS) ReadFile(p string) ([]byte, error) {
	if err := t.ended(); err != nil {
		return nil, err
	}
	name := rel(p)
	b, ok := t.files[name]
	var err error
	if !ok {
		b, err = fs.ReadFile(t.fsys, name)
	}
	if err == nil && t.read != nil {
		t.read.add(name)
	}
	return b, err
}

func (t treeFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if err := t.ended(); err != nil {
		return "", "", err
	}
	r := rel(p)
	st, err := fs.Stat(t.fsys, r)
	if err != nil {
		return "", "", err
	}
	abs := "/" + strings.TrimPrefix(r, ".")
	if st.IsDir() {
		return filesys.ConfirmedDir(path.Clean(abs)), "", nil
	}
	return filesys.ConfirmedDir(path.Dir(abs)), path.Base(abs), nil
}

func (t treeFS) Glob(pattern string) ([]string, error) {
	if err := t.ended(); err != nil {
		return nil, err
	}
	m, err := fs.Glob(t.fsys, rel(pattern))
	if err != nil {
		return nil, err
	}
	for i := range m {
		m[i] = "/" + m[i]
	}
	return m, nil
}

func (t treeFS) Walk(p string, walkFn filepath.WalkFunc) error {
	if err := t.ended(); err != nil {
		return err
	}
	root := rel(p)
	return fs.WalkDir(t.fsys, root, func(name string, d fs.DirEntry, err error) error {
		full := "/" + strings.TrimPrefix(name, ".")
		if err != nil {
			return walkFn(full, nil, err)
		}
		info, ierr := d.Info()
		return walkFn(path.Clean(full), info, ierr)
	})
}

// readFiles are the files kustomize read, in the order it first read
// them.
type readFiles struct {
	names []string
	seen  map[string]bool
}

func (r *readFiles) add(name string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[name] {
		r.seen[name] = true
		r.names = append(r.names, name)
	}
}

type readOnlyFile struct{ fs.File }

func (readOnlyFile) Write([]byte) (int, error) { return 0, errReadOnly }

func (f readOnlyFile) Stat() (os.FileInfo, error) { return f.File.Stat() }
