// Package rawfile creates and reads the many small files of an unpacked
// tree with the fewest system calls.
//
// Every file the os package opens on Linux is offered to the runtime's
// network poller: a failed epoll_ctl and four fcntl calls around it, five
// system calls on top of open, write and close. For the 20,000 files of a
// large add-on that is a fifth of an unpack's CPU time. The files here are
// regular files in directories addonpkg made itself (an output's temp
// tree, a spill directory), which the poller has no use for.
//
// On systems other than Unix the functions fall back to the os package.
package rawfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
)

// errLonger marks a file that holds more bytes than it should.
var errLonger = errors.New("longer than expected")

// WriteTemp creates a new file in dir named prefix and a random suffix
// (mode 0600, never an existing name, never through a link), copies size
// bytes of r into it through buf, and returns its path; with onWrite
// set, every chunk is passed to it too (a hash). A short r is
// io.ErrUnexpectedEOF. On failure nothing is left behind.
func WriteTemp(dir, prefix string, r io.Reader, size int64, buf []byte, onWrite func([]byte)) (string, error) {
	return writeTemp(dir, prefix, func(f *file) error { return f.copyFrom(r, size, buf, onWrite) })
}

// WriteTempBytes is WriteTemp of data, written as it is.
func WriteTempBytes(dir, prefix string, data []byte) (string, error) {
	return writeTemp(dir, prefix, func(f *file) error { return f.writeAll(data) })
}

func writeTemp(dir, prefix string, fill func(*file) error) (string, error) {
	for range 10 {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(r[:]))
		f, err := createExclusive(name, 0o600)
		if isExist(err) {
			continue // a name taken by chance: draw another
		}
		if err != nil {
			return "", err
		}
		err = fill(f)
		if cerr := f.close(); err == nil {
			err = cerr
		}
		if err != nil {
			remove(name)
			return "", err
		}
		return name, nil
	}
	return "", &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// copyFrom writes size bytes of r.
func (f *file) copyFrom(r io.Reader, size int64, buf []byte, onWrite func([]byte)) error {
	if len(buf) == 0 {
		buf = make([]byte, 32<<10)
	}
	for size > 0 {
		chunk := buf[:min(int64(len(buf)), size)]
		n, err := io.ReadFull(r, chunk)
		if n > 0 {
			if onWrite != nil {
				onWrite(chunk[:n])
			}
			if werr := f.writeAll(chunk[:n]); werr != nil {
				return werr
			}
			size -= int64(n)
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			if size > 0 {
				return io.ErrUnexpectedEOF
			}
		case err != nil:
			return err
		}
	}
	return nil
}
