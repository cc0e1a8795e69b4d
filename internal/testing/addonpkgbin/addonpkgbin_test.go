package addonpkgbin_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/addonpkgbin"
)

// A binary that Env names is the one tested, nothing is built; a name
// that is no file is refused rather than built around.
func TestPathTakesThePrebuiltBinary(t *testing.T) {
	dir := t.TempDir()
	prebuilt := filepath.Join(dir, "prebuilt")
	if err := os.WriteFile(prebuilt, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(addonpkgbin.Env, prebuilt)
	out := t.TempDir()
	// No module at root: a build would fail.
	got, err := addonpkgbin.Path(t.TempDir(), out)
	if err != nil || got != prebuilt {
		t.Fatalf("Path = %q, %v; want %q", got, err, prebuilt)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("Path built into %s though %s names a binary", out, addonpkgbin.Env)
	}

	for _, bad := range []string{filepath.Join(dir, "missing"), dir} {
		t.Setenv(addonpkgbin.Env, bad)
		if got, err := addonpkgbin.Path(t.TempDir(), out); !errors.Is(err, addonpkgbin.ErrNotABinary) {
			t.Errorf("%s=%s: Path = %q, %v; want ErrNotABinary", addonpkgbin.Env, bad, got, err)
		}
	}
}
