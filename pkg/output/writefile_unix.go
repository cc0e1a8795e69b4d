//go:build unix

package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// writeData writes a regular file of the temp tree: base, in the
// directory dirName (open as d), made with perm and holding data.
//
// os.Root.WriteFile costs eight system calls per file on Linux: the
// runtime tries to register every file it opens with its network poller,
// setting and clearing non-blocking mode around the attempt. For a tree
// of many small files that is a fifth of an unpack's CPU time. Here it is
// openat, write and close, relative to the directory's descriptor. The
// rules are os.Root's and stricter: one path component, and a link in its
// place is refused rather than followed (the temp tree has no links while
// files are written; they come last).
func (w *Writer) writeData(d *os.Root, dirName, base string, data []byte, perm fs.FileMode) error {
	if base == "" || base == "." || base == ".." || strings.ContainsRune(base, '/') {
		return fmt.Errorf("%q: not a file name", base)
	}
	dir, err := w.dirFileOf(d, dirName)
	if err != nil {
		return err
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(int(dir.Fd()), base, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: base, Err: err}
	}
	for len(data) > 0 {
		n, err := retryEINTR(func() (int, error) { return unix.Write(fd, data) })
		if err != nil {
			unix.Close(fd)
			return &fs.PathError{Op: "write", Path: base, Err: err}
		}
		data = data[n:]
	}
	if err := unix.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: base, Err: err}
	}
	return nil
}

// retryEINTR calls fn again while it is interrupted by a signal: the Go
// runtime's own preemption signals interrupt system calls.
func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// dirFileOf opens the directory d (dirName in the temp tree) once, for
// its descriptor.
func (w *Writer) dirFileOf(d *os.Root, dirName string) (*os.File, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.dirFiles[dirName]; ok {
		return f, nil
	}
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	if w.dirFiles == nil {
		w.dirFiles = map[string]*os.File{}
	}
	w.dirFiles[dirName] = f
	return f, nil
}
