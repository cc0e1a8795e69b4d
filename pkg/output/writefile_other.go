//go:build !unix

package output

import (
	"io/fs"
	"os"
)

// writeData writes a regular file of the temp tree: base, in the
// directory dirName (open as d), made with perm and holding data.
func (w *Writer) writeData(d *os.Root, dirName, base string, data []byte, perm fs.FileMode) error {
	return d.WriteFile(base, data, perm)
}
