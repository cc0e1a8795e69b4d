//go:build unix

package output

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/addonpkg/addonpkg/internal/rawfile"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// writeData writes a regular file of the temp tree: base, in the
// directory dirName (open as d), made with perm and holding data.
//
// os.Root.WriteFile costs eight system calls a file on Linux, where
// rawfile.WriteAt costs three (openat, write, close, relative to the
// directory's descriptor). The rules are os.Root's and stricter: one path
// component, and a link in its place is refused rather than followed (the
// temp tree has no links while files are written; they come last).
func (w *Writer) writeData(d *os.Root, dirName, base string, data []byte, perm fs.FileMode) error {
	if safetree.CleanComponent(base) != nil {
		return fmt.Errorf("%q: not a file name", base)
	}
	dir, err := w.dirFileOf(d, dirName)
	if err != nil {
		return err
	}
	return rawfile.WriteAt(dir, base, data, perm)
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
