//go:build !unix

package rawfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

type file struct{ f *os.File }

func createExclusive(name string, perm fs.FileMode) (*file, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	return &file{f}, nil
}

func isExist(err error) bool { return errors.Is(err, fs.ErrExist) }

func remove(name string) { os.Remove(name) }

func (f *file) writeAll(p []byte) error { _, err := f.f.Write(p); return err }

func (f *file) close() error { return f.f.Close() }

// ReadInto fills b with the regular file at path, which must hold
// exactly len(b) bytes.
func ReadInto(path string, b []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.ReadFull(f, b); err != nil {
		return &fs.PathError{Op: "read", Path: path, Err: err}
	}
	var one [1]byte
	if n, _ := f.Read(one[:]); n != 0 {
		return &fs.PathError{Op: "read", Path: path, Err: errLonger}
	}
	return nil
}
