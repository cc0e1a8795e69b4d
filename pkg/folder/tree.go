package folder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// ErrChanged marks a file of an open folder (Open) whose type or size is
// no longer what was listed: the folder changed while it was being read.
var ErrChanged = errors.New("file changed while it was read")

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
	l, err := list(dir, limits, t)
	if err != nil {
		return nil, err
	}
	t.root, t.dirs.top = l.root, l.root
	return t, nil
}

// load reads every file of the tree into memory (Load), on every core:
// for a large folder, the open, read and close calls are a good part of
// the work.
func (t *Tree) load() (*filetree.FS, error) {
	b := filetree.NewBuilder()
	type job struct {
		name string
		n    *node
		data []byte
		err  error
	}
	var jobs []job
	var walk func(dir string, n *node) error
	walk = func(dir string, n *node) error {
		for _, c := range n.children {
			p := path.Join(dir, c.name)
			if !c.mode.IsDir() {
				jobs = append(jobs, job{name: p, n: c})
				continue
			}
			if err := b.Mkdir(p, c.mode.Perm()); err != nil {
				return err
			}
			if err := walk(p, c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(".", t.nodes["."]); err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				jobs[i].data, jobs[i].err = t.readNode(jobs[i].n)
			}
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		if err := b.WriteFile(j.name, j.data, j.n.mode.Perm()); err != nil {
			return nil, err
		}
	}
	return b.FS(), nil
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
		return filetree.DirFile(info{n}, entriesOf(n)), nil
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
	return t.readNode(n)
}

// readNode reads the whole file n, exactly its listed size: with one
// read call for most files (file.Read).
func (t *Tree) readNode(n *node) ([]byte, error) {
	f, err := t.open(n)
	if err != nil {
		return nil, err
	}
	r := &file{info: info{n}, f: f, left: n.size, path: t.diskPath(n)}
	defer r.Close()
	b := make([]byte, n.size+1) // room to see a file that grew
	total := 0
	for {
		m, err := r.Read(b[total:])
		total += m
		if err == io.EOF {
			return b[:total:total], nil
		}
		if err != nil {
			return nil, err
		}
	}
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
		return grown(p, size)
	}
	return nil
}

// grown is the error of a file that holds more than its listed size.
func grown(p string, size int64) error {
	return &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("%w: listed with %d bytes, grew while read", ErrChanged, size)}
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
	eof  bool  // the end of the file was seen where it was listed
	path string
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return f.f.Close() }

func (f *file) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.left == 0 {
		if !f.eof {
			if err := atEnd(f.f, f.path, f.n.size); err != nil {
				return 0, err
			}
			f.eof = true
		}
		return 0, io.EOF
	}
	// One byte more than is left, when p has room: a short read then
	// shows the end of the file without another call, and a file that
	// grew shows itself.
	want := p
	if int64(len(p)) > f.left {
		want = p[:f.left+1]
	}
	n, err := f.f.Read(want)
	if int64(n) > f.left {
		return 0, grown(f.path, f.n.size)
	}
	f.left -= int64(n)
	if f.left == 0 && n < len(want) {
		f.eof = true // a regular file reads short only at its end
	}
	if f.left > 0 && (err == io.EOF || (err == nil && n == 0)) {
		return n, shrunk(f.path, f.n.size, io.ErrUnexpectedEOF)
	}
	if err == io.EOF {
		err = nil // the listed bytes are all read: EOF comes next
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
