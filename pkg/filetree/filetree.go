// Package filetree is the read-only file system that holds an add-on
// tree once it is unpacked or loaded: regular files, directories and
// relative symbolic links, nothing else.
//
// The tree's shape is in memory; a file's bytes may be in memory or on
// disk. By default a Builder holds them in memory; a file the unpacker
// streamed to disk is read from there (WriteFileOnDisk); past the budget
// of SpillPast, files are appended to one pack file in a spill
// directory; a file of an Opener (a folder listed on disk) is read from
// it each time it is read, and must still be what was listed
// (WriteFileFrom); and Drop lets a file's bytes go, keeping its size and
// digest (reading it then fails with ErrDropped). InMemory says how many
// bytes are held in memory; FS.Close closes the pack file and the
// openers, and the caller removes the directories the files on disk are
// in.
//
// A Builder assembles the tree (the unpacker applies layers through it); FS
// is the immutable result and implements fs.FS, fs.ReadDirFS, fs.ReadFileFS,
// fs.StatFS and fs.ReadLinkFS.
package filetree

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/addonpkg/addonpkg/internal/rawfile"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// node is one entry of the tree.
type node struct {
	name     string
	mode     fs.FileMode // type bits and permissions
	data     []byte
	size     int64     // a file's size, also once its bytes are dropped
	sum      *[32]byte // a file's SHA-256, when the writer gave it
	dropped  bool      // the file's bytes were let go (Builder.Drop)
	disk     string    // a file whose bytes are in this file on disk
	pack     *pack     // or in this pack, at off
	off      int64
	from     Opener // or in the file src of this opener (WriteFileFrom)
	src      string
	target   string           // symlink target
	children map[string]*node // directories only
}

// Builder assembles a tree. It is not safe for concurrent use.
type Builder struct {
	root  *node
	size  int64
	count int
	links int // symlinks in the tree: without any, paths need no resolving
	// disks counts the nodes that read each file on disk
	// (WriteFileOnDisk, CopyFile): the file goes when the last one does.
	disks map[string]int

	// With SpillPast: the bytes of files held in memory, the most they
	// may be, and the pack that takes the files past it.
	mem, budget int64
	spillDir    string
	pack        *pack

	openers []Opener // of WriteFileFrom's files, closed with the tree
}

// A pack is a file on disk that holds the bytes of many files of a tree,
// one after the other: the files a Builder spills past its budget. One
// file rather than one per tree file, because creating, reading back and
// deleting thousands of small files costs more than the unpack itself.
type pack struct {
	f    *os.File
	w    *bufio.Writer // appends, until the tree is frozen
	size int64
}

// flush writes what is buffered, so that the pack's bytes can be read.
func (p *pack) flush() error {
	if p.w == nil || p.w.Buffered() == 0 {
		return nil
	}
	return p.w.Flush()
}

// NewBuilder returns a Builder holding an empty root directory.
func NewBuilder() *Builder {
	return &Builder{root: &node{name: ".", mode: fs.ModeDir | 0o755, children: map[string]*node{}}, disks: map[string]int{}}
}

// Size is the number of file bytes the tree holds.
func (b *Builder) Size() int64 { return b.size }

// SpillPast bounds the file bytes the tree holds in memory: a file that
// WriteFile or WriteFileSum would take past budget bytes is appended to a
// file created in dir instead, and read from there (like WriteFileOnDisk's
// files, but many to one file on disk). A budget of 0 spills every
// non-empty file. The bytes of a spilled file that is later removed or
// replaced stay in that file on disk, which goes with dir: the caller
// removes dir once the tree is no longer read (after FS.Close).
func (b *Builder) SpillPast(dir string, budget int64) {
	b.spillDir, b.budget = dir, budget
}

// InMemory is the number of file bytes the tree holds in memory, a file
// shared by copies counted once per copy.
func (b *Builder) InMemory() int64 { return b.mem }

// hold keeps a new file's bytes in memory, or past the budget appends them
// to the pack and lets them go.
func (b *Builder) hold(n *node) error {
	if b.spillDir == "" || n.size == 0 || b.mem+n.size <= b.budget {
		b.mem += n.size
		return nil
	}
	if b.pack == nil {
		f, err := os.CreateTemp(b.spillDir, "pack-*")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSpill, err)
		}
		b.pack = &pack{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	}
	if _, err := b.pack.w.Write(n.data); err != nil {
		return fmt.Errorf("%w: %w", ErrSpill, err)
	}
	n.pack, n.off, n.data = b.pack, b.pack.size, nil
	b.pack.size += n.size
	return nil
}

// ErrSpill marks a file that could not be written to the spill directory
// (SpillPast): a full or failing disk, not a fault of the tree.
var ErrSpill = errors.New("spilling to disk")

// Close releases the pack file and the openers of a tree that will not
// be built (an unpack or a listing that failed); the pack's bytes go with
// the spill directory.
func (b *Builder) Close() error {
	return closeAll(b.pack, b.openers)
}

// closeAll closes a tree's pack, if it has one, and its openers.
func closeAll(p *pack, openers []Opener) error {
	var errs []error
	if p != nil {
		errs = append(errs, p.f.Close())
	}
	for _, o := range openers {
		errs = append(errs, o.Close())
	}
	return errors.Join(errs...)
}

// Count is the number of entries below the root.
func (b *Builder) Count() int { return b.count }

// lookup walks to the node of a clean relative path ("." is the root). It
// does not follow symlinks: the tree's own paths never pass through one.
func (b *Builder) lookup(name string) *node {
	if name == "." {
		return b.root
	}
	n := b.root
	for part := range strings.SplitSeq(name, "/") {
		if n.children == nil {
			return nil
		}
		n = n.children[part]
		if n == nil {
			return nil
		}
	}
	return n
}

// Lookup reports whether name exists and its mode.
func (b *Builder) Lookup(name string) (fs.FileMode, bool) {
	n := b.lookup(name)
	if n == nil {
		return 0, false
	}
	return n.mode, true
}

// ReadFile returns the bytes of a regular file in the tree.
func (b *Builder) ReadFile(name string) ([]byte, bool) {
	n := b.lookup(name)
	if n == nil || !n.mode.IsRegular() || n.dropped {
		return nil, false
	}
	data, err := n.read()
	return data, err == nil
}

// ErrNotDir is returned when a path's parent is not a directory.
var ErrNotDir = errors.New("parent is not a directory")

// parent returns the directory that holds name, creating missing
// directories when mkdir is set.
func (b *Builder) parent(name string, mkdir bool) (*node, string, error) {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return b.root, base, nil
	}
	n := b.root
	for part := range strings.SplitSeq(dir, "/") {
		c := n.children[part]
		if c == nil {
			if !mkdir {
				return nil, base, fs.ErrNotExist
			}
			c = &node{name: part, mode: fs.ModeDir | 0o755, children: map[string]*node{}}
			n.children[part] = c
			b.count++
		}
		if !c.mode.IsDir() {
			return nil, base, ErrNotDir
		}
		n = c
	}
	return n, base, nil
}

func (b *Builder) put(name string, nn *node) error {
	if !fs.ValidPath(name) || name == "." {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrInvalid}
	}
	p, base, err := b.parent(name, true)
	if err != nil {
		return &fs.PathError{Op: "create", Path: name, Err: err}
	}
	nn.name = base
	if old := p.children[base]; old != nil {
		if old.mode.IsDir() && nn.mode.IsDir() {
			old.mode = nn.mode // a directory entry over a directory keeps its contents
			return nil
		}
		// Counted before old goes, in case both read one file on disk.
		b.holdDisk(nn)
		b.forget(old)
	} else {
		b.holdDisk(nn)
	}
	p.children[base] = nn
	b.count++
	b.size += nn.size
	if nn.mode&fs.ModeSymlink != 0 {
		b.links++
	}
	return nil
}

// forget subtracts a subtree from the counters, and deletes the files on
// disk that no node reads any more.
func (b *Builder) forget(n *node) {
	b.count--
	b.size -= n.size
	if n.mode&fs.ModeSymlink != 0 {
		b.links--
	}
	if n.disk != "" && b.releaseDisk(n.disk) {
		os.Remove(n.disk)
	}
	if n.inMemory() {
		b.mem -= n.size
	}
	for _, c := range n.children {
		b.forget(c)
	}
}

// holdDisk counts a new node that reads a file on disk.
func (b *Builder) holdDisk(n *node) {
	if n.disk != "" {
		b.disks[n.disk]++
	}
}

// releaseDisk uncounts a node that read the file at path, and reports
// whether it was the last.
func (b *Builder) releaseDisk(path string) bool {
	b.disks[path]--
	if b.disks[path] > 0 {
		return false
	}
	delete(b.disks, path)
	return true
}

// Mkdir adds a directory (and its parents); an existing directory keeps
// its contents, anything else at that path is replaced.
func (b *Builder) Mkdir(name string, perm fs.FileMode) error {
	return b.put(name, &node{mode: fs.ModeDir | perm.Perm(), children: map[string]*node{}})
}

// WriteFile adds a regular file, replacing whatever was at name. The tree
// keeps data without copying it (or, past the budget of SpillPast, writes
// it to disk and keeps none of it).
func (b *Builder) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return b.putFile(name, &node{mode: perm.Perm(), data: data, size: int64(len(data))})
}

// WriteFileSum is WriteFile with the SHA-256 of data, which FS.SHA256
// then reports instead of anyone hashing the bytes again.
func (b *Builder) WriteFileSum(name string, data []byte, perm fs.FileMode, sum [32]byte) error {
	return b.putFile(name, &node{mode: perm.Perm(), data: data, size: int64(len(data)), sum: &sum})
}

// putFile puts a regular file of bytes in the tree.
func (b *Builder) putFile(name string, n *node) error {
	if !fs.ValidPath(name) || name == "." {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrInvalid}
	}
	if err := b.hold(n); err != nil {
		return &fs.PathError{Op: "create", Path: name, Err: err}
	}
	if err := b.put(name, n); err != nil {
		if n.inMemory() {
			b.mem -= n.size
		}
		return err
	}
	return nil
}

// WriteFileOnDisk adds a regular file whose size bytes, with SHA-256
// sum, are in the file at path on disk (a file the unpacker streamed out
// rather than hold): the tree reads them from there when asked, and Open
// streams them without holding them. The file must stay in place while
// the tree is read, or be Dropped. The Builder owns it until then: when
// the last node that reads it leaves the tree (Remove, Clear, a file
// written over it), the Builder deletes it.
func (b *Builder) WriteFileOnDisk(name, path string, size int64, perm fs.FileMode, sum [32]byte) error {
	return b.put(name, &node{mode: perm.Perm(), disk: path, size: size, sum: &sum})
}

// CopyFile adds name as a copy of the regular file src (its bytes, or its
// size and SHA-256 if they were dropped), with mode perm.
func (b *Builder) CopyFile(src, name string, perm fs.FileMode) error {
	n := b.lookup(src)
	if n == nil || !n.mode.IsRegular() {
		return &fs.PathError{Op: "copy", Path: src, Err: fs.ErrNotExist}
	}
	c := &node{mode: perm.Perm(), data: n.data, disk: n.disk, pack: n.pack, off: n.off, from: n.from, src: n.src, size: n.size, sum: n.sum, dropped: n.dropped}
	if err := b.put(name, c); err != nil {
		return err
	}
	if c.inMemory() {
		b.mem += c.size
	}
	return nil
}

// ErrDropped is returned when reading a file whose bytes the tree let go.
var ErrDropped = errors.New("file content not held in memory")

// Drop lets go of the bytes of the regular file name, which must have a
// SHA-256 (WriteFileSum): the tree keeps its size and digest, and reading
// it fails with ErrDropped. A caller that streams files elsewhere as they
// arrive uses it to hold the tree's shape, not its bytes.
func (b *Builder) Drop(name string) error {
	n := b.lookup(name)
	if n == nil || !n.mode.IsRegular() || n.sum == nil {
		return &fs.PathError{Op: "drop", Path: name, Err: fs.ErrInvalid}
	}
	if n.disk != "" {
		b.releaseDisk(n.disk) // the caller took the file: not deleted
	}
	if n.inMemory() {
		b.mem -= n.size
	}
	n.data, n.disk, n.pack, n.dropped = nil, "", nil, true
	return nil
}

// Symlink adds a symbolic link to target. Callers check the target: the
// tree stores it as given.
func (b *Builder) Symlink(target, name string) error {
	return b.put(name, &node{mode: fs.ModeSymlink | 0o777, target: target})
}

// Remove deletes name and everything below it; a missing name is no error.
func (b *Builder) Remove(name string) {
	if name == "." {
		b.Clear(".")
		return
	}
	p, base, err := b.parent(name, false)
	if err != nil {
		return
	}
	if old := p.children[base]; old != nil {
		b.forget(old)
		delete(p.children, base)
	}
}

// Clear deletes the contents of directory name, keeping the directory.
func (b *Builder) Clear(name string) {
	n := b.lookup(name)
	if n == nil || !n.mode.IsDir() {
		return
	}
	for k, c := range n.children {
		b.forget(c)
		delete(n.children, k)
	}
}

// FS freezes the tree. The Builder must not be used afterwards: a
// second FS panics, as a programming error, rather than give a tree with
// nothing at its root.
func (b *Builder) FS() *FS {
	if b.root == nil {
		panic("filetree: Builder.FS called twice")
	}
	f := &FS{root: b.root, size: b.size, count: b.count, links: b.links, mem: b.mem, pack: b.pack, openers: b.openers}
	if b.pack != nil {
		f.packErr = b.pack.flush()
		b.pack.w = nil
	}
	b.root = nil
	return f
}

// FS is an immutable tree, whose shape is in memory.
type FS struct {
	root  *node
	size  int64
	count int
	links int
	mem   int64

	pack    *pack // the Builder's, if it spilled (SpillPast)
	packErr error // from writing it out
	openers []Opener
}

// InMemory is the number of file bytes the tree holds in memory
// (Builder.InMemory).
func (f *FS) InMemory() int64 { return f.mem }

// Close closes the file on disk that holds the files the Builder spilled
// past its budget (SpillPast), and the openers of its files read on
// demand (WriteFileFrom): those files can no longer be read. A tree that
// has neither has nothing to close.
func (f *FS) Close() error {
	return closeAll(f.pack, f.openers)
}

// Size is the number of file bytes in the tree.
func (f *FS) Size() int64 { return f.size }

// Count is the number of entries below the root.
func (f *FS) Count() int { return f.count }

func (f *FS) find(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return f.root, nil
	}
	n := f.root
	for part := range strings.SplitSeq(name, "/") {
		if !n.mode.IsDir() {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		n = n.children[part]
		if n == nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
	}
	return n, nil
}

// resolve follows symlinks in name the way safetree resolves them (the
// one rule for every reader), staying inside the tree.
func (f *FS) resolve(op, name string) (*node, string, error) {
	if !fs.ValidPath(name) {
		return nil, name, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if f.links == 0 {
		n, err := f.find(op, name)
		return n, name, err
	}
	p, err := safetree.Resolve(f, name)
	if err != nil {
		var se *safetree.Error
		if errors.As(err, &se) {
			return nil, name, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		return nil, name, err
	}
	n, err := f.find(op, p)
	if err != nil {
		return nil, name, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, p, nil
}

// Open opens name, following symlinks inside the tree.
func (f *FS) Open(name string) (fs.File, error) {
	n, _, err := f.resolve("open", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return &dir{fi: info{n}, entries: sortedEntries(n)}, nil
	}
	if n.dropped {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrDropped}
	}
	if n.from != nil {
		f, err := n.openFrom()
		if err != nil {
			return nil, err // the opener's error names the file
		}
		return f, nil
	}
	if n.disk != "" {
		f, err := n.open()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return f, nil
	}
	if n.pack != nil {
		if f.packErr != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: f.packErr}
		}
		return &diskFile{info: info{n}, r: io.NewSectionReader(n.pack.f, n.off, n.size)}, nil
	}
	data, err := n.read()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{info: info{n}, data: data}, nil
}

// SHA256 reports the digest of the regular file name, when the tree was
// given it (Builder.WriteFileSum).
func (f *FS) SHA256(name string) ([32]byte, bool) {
	n, _, err := f.resolve("sha256", name)
	if err != nil || !n.mode.IsRegular() || n.sum == nil {
		return [32]byte{}, false
	}
	return *n.sum, true
}

// ReadFile returns a copy of the bytes of name, as fs.ReadFileFS requires
// (the caller may modify it). Bytes avoids the copy.
func (f *FS) ReadFile(name string) ([]byte, error) {
	b, err := f.Bytes(name)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// Bytes returns the tree's own bytes of name, without a copy: callers
// must not modify them.
func (f *FS) Bytes(name string) ([]byte, error) {
	n, _, err := f.resolve("readfile", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	if n.dropped {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: ErrDropped}
	}
	if n.pack != nil && f.packErr != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: f.packErr}
	}
	data, err := n.read()
	if err != nil {
		return nil, n.readError(name, err)
	}
	return data, nil
}

// ReadOnly reads a file of fsys for a caller that will not modify the
// bytes: from a filetree tree it returns the tree's own, without a copy.
func ReadOnly(fsys fs.FS, name string) ([]byte, error) {
	if b, ok := fsys.(interface{ Bytes(string) ([]byte, error) }); ok {
		return b.Bytes(name)
	}
	return fs.ReadFile(fsys, name)
}

// ReadInto reads a file of fsys for a caller that will neither modify the
// bytes nor keep them once it reads the next file: from a filetree tree it
// returns the tree's own bytes when the tree holds them in memory, and
// reads the bytes of a file on disk into buf when they fit (a new slice
// when they do not). A caller that parses many files and keeps nothing
// of their bytes reads them all into one buffer.
func ReadInto(fsys fs.FS, name string, buf []byte) ([]byte, error) {
	f, ok := fsys.(*FS)
	if !ok {
		return ReadOnly(fsys, name)
	}
	n, _, err := f.resolve("readfile", name)
	if err != nil {
		return nil, err
	}
	if (n.disk == "" && n.pack == nil && n.from == nil) || n.mode.IsDir() || n.dropped || int64(cap(buf)) < n.size {
		return f.Bytes(name)
	}
	if n.pack != nil && f.packErr != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: f.packErr}
	}
	b := buf[:n.size]
	if err := n.readInto(b); err != nil {
		return nil, n.readError(name, err)
	}
	return b, nil
}

// readError is the error of reading the bytes of name, node n: those of
// an opener already name the file where it is.
func (n *node) readError(name string, err error) error {
	if n.from != nil {
		return err
	}
	return &fs.PathError{Op: "readfile", Path: name, Err: err}
}

// ReadDir lists a directory in name order.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, _, err := f.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return sortedEntries(n), nil
}

// Stat describes name, following symlinks.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	n, _, err := f.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// Lstat describes name without following a final symlink.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	n, err := f.find("lstat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// ReadLink returns a symlink's target.
func (f *FS) ReadLink(name string) (string, error) {
	n, err := f.find("readlink", name)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return n.target, nil
}

func sortedEntries(n *node) []fs.DirEntry {
	out := make([]fs.DirEntry, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, fs.FileInfoToDirEntry(info{c}))
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// inMemory reports whether the node is a regular file whose bytes the
// tree holds in memory.
func (n *node) inMemory() bool {
	return n.mode.IsRegular() && n.disk == "" && n.pack == nil && n.from == nil && !n.dropped
}

// read returns a file's bytes: its own, or those of its file on disk.
func (n *node) read() ([]byte, error) {
	if n.from != nil {
		// One byte of room past the listed size, to see a file that grew
		// without another read call (readFrom).
		b := make([]byte, n.size, n.size+1)
		if err := n.readFrom(b); err != nil {
			return nil, err
		}
		return b[:n.size:n.size], nil
	}
	if n.disk == "" && n.pack == nil {
		return n.data, nil
	}
	// Exactly the size it had: a tree read whole from disk (a render of a
	// spilled unpack) holds every byte of it, none more.
	b := make([]byte, n.size)
	if err := n.readInto(b); err != nil {
		return nil, err
	}
	return b, nil
}

// readInto reads the bytes of a file on disk into b, of its size.
func (n *node) readInto(b []byte) error {
	if n.from != nil {
		return n.readFrom(b)
	}
	if n.pack != nil {
		if err := n.pack.flush(); err != nil {
			return err
		}
		if _, err := n.pack.f.ReadAt(b, n.off); err != nil {
			return fmt.Errorf("%s changed on disk: %w", n.pack.f.Name(), err)
		}
		return nil
	}
	if err := rawfile.ReadInto(n.disk, b); err != nil {
		return fmt.Errorf("%s changed on disk: %w", n.disk, err)
	}
	return nil
}

// open opens a file on disk, to be read without holding it.
func (n *node) open() (*diskFile, error) {
	f, err := os.Open(n.disk)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() != n.size {
		err = fmt.Errorf("%s changed on disk: %d bytes, %d expected", n.disk, st.Size(), n.size)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &diskFile{info: info{n}, f: f, r: io.NewSectionReader(f, 0, n.size)}, nil
}

type info struct{ n *node }

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return i.n.size }
func (i info) Mode() fs.FileMode  { return i.n.mode }
func (i info) ModTime() time.Time { return time.Unix(0, 0).UTC() }
func (i info) IsDir() bool        { return i.n.mode.IsDir() }
func (i info) Sys() any           { return nil }

type file struct {
	info
	data []byte
	off  int
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }
func (f *file) Read(p []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.off:])
	f.off += n
	return n, nil
}

// ReadAt lets callers use a file as an io.ReaderAt.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// diskFile is an open file whose bytes are on disk: it reads them from
// there, at most the size the tree has for it.
type diskFile struct {
	info
	f *os.File // nil in a pack: the FS keeps the pack open
	r *io.SectionReader
}

func (f *diskFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *diskFile) Close() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
}

func (f *diskFile) Read(p []byte) (int, error)                   { return f.r.Read(p) }
func (f *diskFile) ReadAt(p []byte, off int64) (int, error)      { return f.r.ReadAt(p, off) }
func (f *diskFile) Seek(offset int64, whence int) (int64, error) { return f.r.Seek(offset, whence) }

// dir is an open directory, whose listing is entries in the order
// ReadDir returns them.
type dir struct {
	fi      fs.FileInfo
	entries []fs.DirEntry
	off     int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.fi, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.fi.Name(), Err: errors.New("is a directory")}
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
