//go:build unix

package rawfile

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

type file struct {
	fd   int
	name string
}

// retryEINTR calls fn again while a signal interrupts it: the Go
// runtime's own preemption signals interrupt system calls.
func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

func createExclusive(name string, perm fs.FileMode) (*file, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{fd: fd, name: name}, nil
}

func isExist(err error) bool { return errors.Is(err, unix.EEXIST) }

func remove(name string) { unix.Unlink(name) }

func (f *file) writeAll(p []byte) error {
	for len(p) > 0 {
		n, err := retryEINTR(func() (int, error) { return unix.Write(f.fd, p) })
		if err != nil {
			return &fs.PathError{Op: "write", Path: f.name, Err: err}
		}
		p = p[n:]
	}
	return nil
}

func (f *file) close() error {
	if err := unix.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// WriteAt writes data to name, a single path component, in the directory
// open as dir: created with perm (before the umask) or truncated, and
// refused if name is a link, which is not followed.
func WriteAt(dir *os.File, name string, data []byte, perm fs.FileMode) error {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := &file{fd: fd, name: name}
	if err := f.writeAll(data); err != nil {
		f.close()
		return err
	}
	return f.close()
}

// ReadInto fills b with the regular file at path, which must hold
// exactly len(b) bytes (a file of another size is an error: it changed),
// not following a link in its last component.
func ReadInto(path string, b []byte) error {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	for got := 0; got < len(b); {
		n, err := retryEINTR(func() (int, error) { return unix.Read(fd, b[got:]) })
		if err != nil {
			return &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return &fs.PathError{Op: "read", Path: path, Err: io.ErrUnexpectedEOF}
		}
		got += n
	}
	var one [1]byte
	if n, _ := retryEINTR(func() (int, error) { return unix.Read(fd, one[:]) }); n != 0 {
		return &fs.PathError{Op: "read", Path: path, Err: errLonger}
	}
	return nil
}
