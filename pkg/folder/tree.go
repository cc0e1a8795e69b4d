package folder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// ErrChanged marks a file of an open folder (Open) whose type or size is
// no longer what was listed: the folder changed while it was being read.
var ErrChanged = errors.New("file changed while it was read")

// ErrNotDir is returned by Open for a path that is not a directory.
var ErrNotDir = errors.New("not a directory")

// Open lists the add-on folder dir as LoadDir reads it, with every check
// of Load (names, links, file types, .addonignore and the default ignore
// rules, and limits, whose zero fields take the defaults), without
// reading any file. The tree holds the folder's shape (names, modes,
// sizes); its files' bytes are read from dir each time they are read,
// through an os.Root, so a read never leaves the folder
// (filetree.Builder.WriteFileFrom). It reads as the tree Load returns:
// directories list in name order, symlinks inside the folder appear as
// their targets' content (the tree itself has none), every time is the
// Unix epoch. A file whose type or size differs from the listing when it
// is read fails with ErrChanged; one that grows while read is cut at its
// listed size and fails too. Close releases the folder.
// dir must be a directory (LoadFile reads a single manifest file); one
// that is empty or whose every file is ignored is ErrEmpty.
func Open(dir string, limits safetree.Limits) (*filetree.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "read source", Path: dir, Err: errors.Unwrap(err)}
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "read source", Path: dir, Err: ErrNotDir}
	}
	return list(dir, limits)
}

// load reads every file of the listed tree t into memory (Load), on
// every core: for a large folder, the open, read and close calls are a
// good part of the work.
func load(t *filetree.FS) (*filetree.FS, error) {
	b := filetree.NewBuilder()
	type job struct {
		name string
		perm fs.FileMode
		data []byte
		err  error
	}
	var jobs []job
	err := fs.WalkDir(t, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return b.Mkdir(p, info.Mode().Perm())
		}
		jobs = append(jobs, job{name: p, perm: info.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				jobs[i].data, jobs[i].err = t.Bytes(jobs[i].name)
			}
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		if err := b.WriteFile(j.name, j.data, j.perm); err != nil {
			return nil, err
		}
	}
	return b.FS(), nil
}

// opener reads the files of a folder listed by Open for its tree
// (filetree.Opener), by their paths in the folder (through its links),
// as Load reads them: a link through the folder's root (its target may
// be anywhere in the folder), any other file through its directory's.
type opener struct {
	dir   string
	root  *os.Root
	dirs  dirCache
	links map[string]bool // the files that are links in the folder
}

func newOpener(dir string, root *os.Root) *opener {
	return &opener{dir: dir, root: root, dirs: dirCache{top: root}}
}

// OpenFile opens the file name of the folder and describes it.
func (o *opener) OpenFile(name string) (filetree.File, fs.FileInfo, error) {
	f, err := o.openFile(name)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: o.path(name), Err: errors.Unwrap(err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: o.path(name), Err: err}
	}
	return f, st, nil
}

func (o *opener) openFile(name string) (*os.File, error) {
	dir, base := path.Split(name)
	if o.links[name] || dir == "" {
		return openRead(o.root, name)
	}
	d, err := o.dirs.acquire(dir[:len(dir)-1])
	if err != nil {
		return nil, err
	}
	defer o.dirs.release(d)
	return openRead(d.root, base)
}

// openRead opens a file of a folder to read it (openFlags).
func openRead(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|openFlags, 0)
}

// Changed is the ErrChanged of the file name, naming it on disk.
func (o *opener) Changed(name, how string) error {
	return &fs.PathError{Op: "read", Path: o.path(name), Err: fmt.Errorf("%w: %s", ErrChanged, how)}
}

func (o *opener) path(name string) string { return filepath.Join(o.dir, filepath.FromSlash(name)) }

// Close releases the folder; the tree's files cannot be read afterwards.
func (o *opener) Close() error {
	o.dirs.close()
	return o.root.Close()
}
