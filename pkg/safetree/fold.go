package safetree

import (
	"io/fs"
	"path"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// CheckCase refuses a tree in which two names of one directory differ
// only in case or Unicode normalization ("CoreDNS.yaml" and
// "coredns.yaml", or "é" composed and decomposed). Written to a file
// system that folds them (macOS, Windows, some mounts), one would
// silently replace the other, and what is on disk would no longer be the
// add-on that was verified. Every writer of a tree to disk calls it,
// whatever the target's file system, so the same add-on gives the same
// answer everywhere.
func CheckCase(fsys fs.FS) error {
	fold := cases.Fold()
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		entries, err := fs.ReadDir(fsys, name)
		if err != nil {
			return err
		}
		seen := make(map[string]string, len(entries))
		for _, e := range entries {
			key := fold.String(norm.NFC.String(e.Name()))
			if other, ok := seen[key]; ok {
				return refuse(path.Join(name, e.Name()), ErrCaseCollision, "differs from %q only in case or Unicode normalization (a case-insensitive file system would merge them)", path.Join(name, other))
			}
			seen[key] = e.Name()
		}
		return nil
	})
}
