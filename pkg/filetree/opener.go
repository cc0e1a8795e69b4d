package filetree

import (
	"fmt"
	"io"
	"io/fs"
	"slices"
)

// An Opener holds the files a tree reads each time they are read
// (WriteFileFrom): a folder listed on disk, whose bytes the tree never
// holds. The tree owns it: FS.Close, or the Builder's Close, closes it.
// It must be safe for concurrent use, as the tree is.
type Opener interface {
	// OpenFile opens the file name to read it and describes it (as an
	// open file's Stat does). Its error names the file.
	OpenFile(name string) (File, fs.FileInfo, error)
	// Changed is the error of the file name found other than it was
	// listed, how saying in what way ("listed with 10 bytes, now 12").
	Changed(name, how string) error
	io.Closer
}

// File is a file an Opener opened.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
}

// WriteFileFrom adds a regular file listed with size bytes, whose bytes
// are those of the file src of o, read from there each time the tree's
// file is read: the tree holds its name, not its bytes. A read checks
// that src is still what was listed: one that is no longer a regular file
// of size bytes fails with o.Changed, and so does one that ends early or
// grows while it is read (the read is cut at size). o must be comparable
// (a pointer): the tree closes each opener once.
func (b *Builder) WriteFileFrom(name string, o Opener, src string, size int64, perm fs.FileMode) error {
	if err := b.put(name, &node{mode: perm.Perm(), from: o, src: src, size: size}); err != nil {
		return err
	}
	if !slices.Contains(b.openers, o) {
		b.openers = append(b.openers, o)
	}
	return nil
}

// openFrom opens a file of an opener, and checks that it is still the
// regular file of the size listed.
func (n *node) openFrom() (*fromFile, error) {
	f, st, err := n.from.OpenFile(n.src)
	if err != nil {
		return nil, err
	}
	how := ""
	if !st.Mode().IsRegular() {
		how = fmt.Sprintf("listed as a file, now %v", st.Mode().Type())
	} else if st.Size() != n.size {
		how = fmt.Sprintf("listed with %d bytes, now %d", n.size, st.Size())
	}
	if how != "" {
		f.Close()
		return nil, n.from.Changed(n.src, how)
	}
	return &fromFile{info: info{n}, f: f, left: n.size}, nil
}

// readFrom reads the whole file of an opener into b, of its listed size:
// with one read call for most files, when b has room for one more byte
// (fromFile.Read).
func (n *node) readFrom(b []byte) error {
	f, err := n.openFrom()
	if err != nil {
		return err
	}
	defer f.Close()
	b = b[:min(int64(cap(b)), n.size+1)]
	var one [1]byte
	for total := 0; ; {
		p := b[total:]
		if len(p) == 0 {
			p = one[:] // b is full: one more read sees its end
		}
		m, err := f.Read(p)
		total += m
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// fromFile is an open file of an opener: it reads at most the size
// listed, and fails if the file turns out to hold fewer bytes or more.
type fromFile struct {
	info
	f    File
	left int64 // bytes still to read
	eof  bool  // the end of the file was seen where it was listed
}

func (f *fromFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *fromFile) Close() error               { return f.f.Close() }

func (f *fromFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.left == 0 {
		if !f.eof {
			if err := f.atEnd(); err != nil {
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
		return 0, f.grown()
	}
	f.left -= int64(n)
	if f.left == 0 && n < len(want) {
		f.eof = true // a regular file reads short only at its end
	}
	if f.left > 0 && (err == io.EOF || (err == nil && n == 0)) {
		return n, f.shrunk()
	}
	if err == io.EOF {
		err = nil // the listed bytes are all read: EOF comes next
	}
	return n, err
}

// ReadAt reads within the listed size, so that a render that let go of
// its documents' text can read each back.
func (f *fromFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.n.name, Err: fs.ErrInvalid}
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
		return n, f.shrunk()
	}
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// atEnd checks that the file, read up to its listed size, holds no more.
func (f *fromFile) atEnd() error {
	var one [1]byte
	if m, _ := f.f.Read(one[:]); m != 0 {
		return f.grown()
	}
	return nil
}

// shrunk is the error of a file that ended before its listed size.
func (f *fromFile) shrunk() error {
	return f.n.from.Changed(f.n.src, fmt.Sprintf("listed with %d bytes, ended before", f.n.size))
}

// grown is the error of a file that holds more than its listed size.
func (f *fromFile) grown() error {
	return f.n.from.Changed(f.n.src, fmt.Sprintf("listed with %d bytes, grew while read", f.n.size))
}
