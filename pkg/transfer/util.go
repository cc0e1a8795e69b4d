package transfer

import "path/filepath"

// absOf gives temp files a directory even for a bare file name.
func absOf(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
