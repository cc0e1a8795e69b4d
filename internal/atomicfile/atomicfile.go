// Package atomicfile writes files all or nothing: a reader, or the file
// system after a crash, sees the old file or the new one, never a part.
// Every file addonpkg publishes (archives, lock files, cache reports, the
// store's index) is written this way; a tree written in a temp folder
// and renamed into place (pkg/output) is synced whole first (SyncTree).
//
// It is also the one home of the rule for where an output may go: every
// output addonpkg writes (a file with Write, an archive or a layout built
// in TempDir, a tree written by pkg/output) makes the folders above it
// that are missing, as mkdir -p does (MkdirParent). They are left in
// place when the write fails: an empty folder is no half-written output.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write creates name from what fill writes: the bytes go to a temp file
// beside name (named prefix and a random suffix, so that a sweep can
// find what a killed writer left), which is synced, given mode perm and
// renamed over name; then the directory is synced so that the rename
// lasts. On any error name is untouched and the temp file removed.
// The folders above name are made when missing (MkdirParent). A name
// that is a folder is refused before fill runs (EISDIR).
func Write(name, prefix string, perm os.FileMode, fill func(io.Writer) error) error {
	// A folder can never be renamed over: say so before the work (and
	// before "/" makes a temp name with a separator in it).
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return fmt.Errorf("write %s: %w", name, syscall.EISDIR)
	}
	if err := MkdirParent(name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
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

// MkdirParent makes the folder that is to hold name, and the folders
// above it, where they are missing (mode 0755, like mkdir -p), and syncs
// the parent of each folder it made so that a file renamed into them
// survives a crash with the path that leads to it. A path that exists
// but is not a folder is an error (ENOTDIR).
func MkdirParent(name string) error {
	_, err := MakeParent(name)
	return err
}

// MakeParent is MkdirParent, and says which folders it made, deepest
// first: a writer that fails (or is interrupted) removes those it made
// (RemoveMade), so that nothing is left outside its target.
func MakeParent(name string) (made []string, err error) {
	missing, err := missingAbove(name)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	dir := filepath.Dir(filepath.Clean(name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make folder %s: %w", dir, err)
	}
	for _, d := range missing {
		if err := SyncDir(filepath.Dir(d)); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// RemoveMade removes the folders MakeParent made, deepest first, as long
// as they are empty: one that something else filled meanwhile stays.
func RemoveMade(made []string) {
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// CheckParent reports, without changing anything, whether the folder of
// name is there or can be made as MkdirParent makes it: the nearest
// path above name that exists must be a folder. A command with several
// outputs checks them all before it writes the first.
func CheckParent(name string) error {
	_, err := missingAbove(name)
	return err
}

// missingAbove walks up from the folder of name to the nearest path that
// exists, which must be a folder (ENOTDIR otherwise), and gives the
// folders below it that are missing, deepest first.
func missingAbove(name string) (missing []string, err error) {
	for d := filepath.Dir(filepath.Clean(name)); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return missing, nil
		case err == nil:
			return nil, &fs.PathError{Op: "make folder", Path: d, Err: syscall.ENOTDIR}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			return missing, nil
		}
	}
}

// TempDir makes a temp directory beside name (named prefix and a random
// suffix), making the folders above name first (MkdirParent): a writer
// builds a layout or a tree there and then packs or renames it into
// name, so that name appears only when complete. The caller removes it.
func TempDir(name, prefix string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	if err := MkdirParent(abs); err != nil {
		return "", err
	}
	return os.MkdirTemp(filepath.Dir(abs), prefix+"*")
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
