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

// ReadFile reads the regular file at path, which must hold size bytes.
func ReadFile(path string, size int64, buf []byte) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != size {
		return nil, &fs.PathError{Op: "read", Path: path, Err: io.ErrUnexpectedEOF}
	}
	return b, nil
}
