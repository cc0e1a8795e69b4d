package folder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// ErrChanged marks a file of an open folder (Open) whose type or size is
// no longer what was listed: the folder changed while it was being read.
var ErrChanged = errors.New("file changed while building")

// ErrNotDir is returned by Open for a path that is not a directory.
var ErrNotDir = errors.New("not a directory")

// Tree is an add-on folder listed on disk (Open): its shape (names,
// modes, sizes) is held in memory, its files' bytes are read from the
// folder when asked, through an os.Root, so a read never leaves the
// folder. It implements fs.FS, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS and
// fs.ReadLinkFS with the semantics of the in-memory tree Load returns:
// directories list in name order, symlinks inside the folder appear as
// their targets' content (the tree itself has none), every time is the
// Unix epoch. A file whose type or size differs from the listing when it
// is read fails with ErrChanged; one that grows while read is cut at its
// listed size and fails too. Close releases the folder.
type Tree struct {
	dir   string
	root  *os.Root
	dirs  dirCache
	nodes map[string]*node // by tree path; "." is the root
	count int
	size  int64
}

// node is one entry of a Tree.
type node struct {
	name     string
	mode     fs.FileMode // type bits and permissions
	size     int64       // a file's size as listed
	src      string      // a file's path in the folder (through its links)
	link     bool        // a file that is a link in the folder
	children []*node     // a directory's entries, in name order
}

// Open lists the add-on folder dir as LoadDir reads it, with every check
// of Load (names, links, file types, .addonignore and the default ignore
// rules, and limits, whose zero fields take the defaults), without
// reading any file: the Tree reads them from dir when they are opened.
// dir must be a directory (LoadFile reads a single manifest file); one
// that is empty or whose every file is ignored is ErrEmpty.
func Open(dir string, limits safetree.Limits) (*Tree, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read source %s: %w", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("read source %s: %w", dir, ErrNotDir)
	}
	t := &Tree{dir: dir, nodes: map[string]*node{".": {name: ".", mode: fs.ModeDir | 0o755}}}
	l, err := list(dir, limits, nil, t)
	if err != nil {
		return nil, err
	}
	t.root, t.dirs.top = l.root, l.root
	return t, nil
}

// Close releases the folder; the tree's files cannot be read afterwards.
func (t *Tree) Close() error {
	t.dirs.close()
	return t.root.Close()
}

// Dir is the folder the tree reads.
func (t *Tree) Dir() string { return t.dir }

// Size is the number of file bytes in the tree, as listed.
func (t *Tree) Size() int64 { return t.size }

// Count is the number of entries below the root.
func (t *Tree) Count() int { return t.count }

// mkdir adds directory name, whose parent is already in the tree.
func (t *Tree) mkdir(name string) {
	if _, ok := t.nodes[name]; ok {
		return
	}
	n := &node{name: path.Base(name), mode: fs.ModeDir | 0o755}
	t.add(name, n)
}

// file adds the regular file name, read from src in the folder (a link
// when link is set).
func (t *Tree) file(name, src string, link bool, size int64, perm fs.FileMode) {
	t.add(name, &node{name: path.Base(name), mode: perm.Perm(), size: size, src: src, link: link})
	t.size += size
}

func (t *Tree) add(name string, n *node) {
	p := t.nodes[path.Dir(name)]
	p.children = append(p.children, n)
	t.nodes[name] = n
	t.count++
}

// sortDir puts the entries of directory name in name order.
func (t *Tree) sortDir(name string) {
	n := t.nodes[name]
	slices.SortFunc(n.children, func(a, b *node) int { return strings.Compare(a.name, b.name) })
}

func (t *Tree) find(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := t.nodes[name]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Open opens name: a directory lists its entries, a file reads from the
// folder.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.find("open", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return &dir{info: info{n}, entries: entriesOf(n)}, nil
	}
	f, err := t.open(n)
	if err != nil {
		return nil, err
	}
	return &file{info: info{n}, f: f, left: n.size, path: t.diskPath(n)}, nil
}

// open opens a file of the tree in the folder and checks that it is
// still the regular file of the size listed.
func (t *Tree) open(n *node) (*os.File, error) {
	f, err := t.openFile(n)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: t.diskPath(n), Err: errors.Unwrap(err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: t.diskPath(n), Err: err}
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: t.diskPath(n), Err: fmt.Errorf("%w: listed as a file, now %v", ErrChanged, st.Mode().Type())}
	}
	if st.Size() != n.size {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: t.diskPath(n), Err: fmt.Errorf("%w: listed with %d bytes, now %d", ErrChanged, n.size, st.Size())}
	}
	return f, nil
}

// openFile opens a file of the tree: a link through the folder's root
// (its target may be anywhere in the folder), any other file through its
// directory's, as Load reads them.
func (t *Tree) openFile(n *node) (*os.File, error) {
	dir, base := path.Split(n.src)
	if n.link || dir == "" {
		return openRead(t.root, n.src)
	}
	d, err := t.dirs.acquire(dir[:len(dir)-1])
	if err != nil {
		return nil, err
	}
	defer t.dirs.release(d)
	return openRead(d.root, base)
}

// openRead opens a file of a folder to read it (openFlags).
func openRead(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|openFlags, 0)
}

func (t *Tree) diskPath(n *node) string { return filepath.Join(t.dir, filepath.FromSlash(n.src)) }

// ReadFile reads the whole file name, exactly its listed size.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	n, err := t.find("readfile", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	f, err := t.open(n)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n.size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, shrunk(t.diskPath(n), n.size, err)
	}
	if err := atEnd(f, t.diskPath(n), n.size); err != nil {
		return nil, err
	}
	return b, nil
}

// shrunk is the error of a file that ended before its listed size.
func shrunk(p string, size int64, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: listed with %d bytes, ended before", ErrChanged, size)
	}
	return &fs.PathError{Op: "read", Path: p, Err: err}
}

// atEnd checks that f, read up to its listed size, holds no more.
func atEnd(f *os.File, p string, size int64) error {
	var one [1]byte
	if m, _ := f.Read(one[:]); m != 0 {
		return &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("%w: listed with %d bytes, grew while read", ErrChanged, size)}
	}
	return nil
}

// ReadDir lists a directory in name order.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.find("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return entriesOf(n), nil
}

// Stat describes name (the tree has no symlinks: Lstat is the same).
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	n, err := t.find("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// Lstat describes name.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	n, err := t.find("lstat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// ReadLink fails for every entry: the folder's links are their targets'
// content in the tree.
func (t *Tree) ReadLink(name string) (string, error) {
	if _, err := t.find("readlink", name); err != nil {
		return "", err
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

func entriesOf(n *node) []fs.DirEntry {
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = fs.FileInfoToDirEntry(info{c})
	}
	return out
}

type info struct{ n *node }

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return i.n.size }
func (i info) Mode() fs.FileMode  { return i.n.mode }
func (i info) ModTime() time.Time { return time.Unix(0, 0).UTC() }
func (i info) IsDir() bool        { return i.n.mode.IsDir() }
func (i info) Sys() any           { return nil }

// file reads a file of the folder, at most its listed size.
type file struct {
	info
	f    *os.File
	left int64 // bytes still to read
	path string
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return f.f.Close() }

func (f *file) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.left == 0 {
		if err := atEnd(f.f, f.path, f.n.size); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	if err == io.EOF || (err == nil && n == 0) {
		return n, shrunk(f.path, f.n.size, io.ErrUnexpectedEOF)
	}
	return n, err
}

// ReadAt reads within the listed size, so that a render that let go of
// its documents' text can read each back.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.path, Err: fs.ErrInvalid}
	}
	if off >= f.n.size {
		return 0, io.EOF
	}
	short := int64(len(p)) > f.n.size-off
	if short {
		p = p[:f.n.size-off]
	}
	n, err := f.f.ReadAt(p, off)
	if err == io.EOF && n < len(p) {
		return n, shrunk(f.path, f.n.size, io.ErrUnexpectedEOF)
	}
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

type dir struct {
	info
	entries []fs.DirEntry
	off     int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.Name(), Err: errors.New("is a directory")}
}

func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
