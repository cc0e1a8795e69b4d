// Package addonpkgbin gives the tests that run addonpkg as a process
// (e2e, e2e/peers, resilience and cmd/addonpkg's process tests) the
// binary they test: a prebuilt one when Env names it, which make test
// builds once for them all, or one built here from ./cmd/addonpkg.
//
// Why one build: each of those test binaries built its own addonpkg (the
// CLI's twice, once under -race and once for the big-data tests), and a
// link of the 110 MB binary costs some 20 s of CPU even on a warm build
// cache, about a minute and a half of CI's two cores for six copies of
// one file.
package addonpkgbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Env names a prebuilt addonpkg binary to test instead of building
// ./cmd/addonpkg: make test's, a release candidate's, or a snapshot's
// while the work tree does not build. A relative path is taken from the
// test's working directory (its package's folder).
const Env = "E2E_ADDONPKG_BIN"

// ErrNotABinary: Env names something that is not a file.
var ErrNotABinary = errors.New("not a file")

// Path returns the addonpkg binary to test: the file Env names, as an
// absolute path, or else ./cmd/addonpkg of the module at root, built as
// plain `go build` builds it into dir.
func Path(root, dir string) (string, error) {
	if p := os.Getenv(Env); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", Env, err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return "", fmt.Errorf("%s=%s: %w", Env, p, ErrNotABinary)
		}
		return abs, nil
	}
	bin := filepath.Join(dir, "addonpkg")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/addonpkg")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/addonpkg: %w\n%s", err, out)
	}
	return bin, nil
}
