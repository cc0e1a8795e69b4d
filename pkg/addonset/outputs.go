package addonset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// ErrOutputIsInput marks an output file that is one of the command's
// inputs (the declaration, its lock) or another of its outputs: writing
// it would replace what was read, or one output with the next.
var ErrOutputIsInput = errors.New("output would overwrite")

// CheckOutputs refuses, before anything is written, an output that is
// the same file as an input or as another output: the same cleaned
// absolute path, or for files that exist, the same file (os.SameFile:
// through a link, say). "" entries are skipped.
func CheckOutputs(inputs, outputs []string) error {
	for i, out := range outputs {
		if out == "" {
			continue
		}
		if err := atomicfile.CheckParent(out); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		for _, in := range inputs {
			if in != "" && sameFile(out, in) {
				return fmt.Errorf("%s: %w the input %s", out, ErrOutputIsInput, in)
			}
		}
		for _, other := range outputs[:i] {
			if other != "" && sameFile(out, other) {
				return fmt.Errorf("%s: %w the output %s", out, ErrOutputIsInput, other)
			}
		}
	}
	return nil
}

func sameFile(a, b string) bool {
	if filepath.Clean(absPath(a)) == filepath.Clean(absPath(b)) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// inputFiles are the files a verb of s reads: the declaration, the
// others given (its lock), and every member's oci-archive. A member's
// archive is an input like the declaration: a mirror written over it
// replaced it whole, and what else it held (other add-ons, their images)
// was gone.
func (s *Set) inputFiles(others ...string) []string {
	in := append([]string{s.File}, others...)
	for _, a := range s.Addons {
		if ref, err := s.Ref(a); err == nil && ref.Kind == source.KindArchive {
			in = append(in, ref.Path)
		}
	}
	return in
}
