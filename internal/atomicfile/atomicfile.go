// Package atomicfile writes files all or nothing: a reader, or the file
// system after a crash, sees the old file or the new one, never a part.
// Every file addonpkg publishes (archives, lock files, cache reports, the
// store's index) is written this way.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Write creates name from what fill writes: the bytes go to a temp file
// beside name (named prefix and a random suffix, so that a sweep can
// find what a killed writer left), which is synced, given mode perm and
// renamed over name; then the directory is synced so that the rename
// lasts. On any error name is untouched and the temp file removed.
func Write(name, prefix string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), prefix+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(name))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// WriteBytes is Write of b.
func WriteBytes(name, prefix string, perm os.FileMode, b []byte) error {
	return Write(name, prefix, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// SyncDir makes the entries of dir (a rename into it) durable. File
// systems that cannot sync a directory say so with EINVAL or ENOTSUP:
// there is nothing more to do on those.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
