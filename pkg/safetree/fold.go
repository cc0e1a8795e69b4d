package safetree

import (
	"io/fs"
	"path"
	"strings"
	"unicode"

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
	k := newFoldKey()
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
			key := k.of(e.Name())
			if other, ok := seen[key]; ok {
				return refuse(path.Join(name, e.Name()), ErrCaseCollision, "differs from %q only in case or Unicode normalization (a case-insensitive file system would merge them)", path.Join(name, other))
			}
			seen[key] = e.Name()
		}
		return nil
	})
}

// foldKey maps names that a case-folding, normalizing file system would
// take as one to one key: Unicode's canonical caseless form (NFD, full
// case folding, NFD again), then each character to the least of its
// simple case orbit (unicode.SimpleFold). The last step is needed because
// x/text's Fold is not a fixed point for Cherokee: it swaps Ꭰ (U+13A0)
// and ꭰ (U+AB70) instead of mapping both to Ꭰ, so those two names (which
// NTFS, APFS and ext4's casefold take as one) had two keys. It is done on
// the decomposed form, where a base letter and its marks map apart, so
// that canonically equivalent names keep one key.
type foldKey struct{ fold cases.Caser }

func newFoldKey() *foldKey { return &foldKey{fold: cases.Fold()} }

func (k *foldKey) of(name string) string {
	return strings.Map(leastOfOrbit, norm.NFD.String(k.fold.String(norm.NFD.String(name))))
}

// leastOfOrbit is the least rune that simple case folding makes equal to r.
func leastOfOrbit(r rune) rune {
	least := r
	for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
		least = min(least, o)
	}
	return least
}
