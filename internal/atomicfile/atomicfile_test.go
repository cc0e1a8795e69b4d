package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/addonpkg/addonpkg/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := atomicfile.WriteBytes(name, ".f.tmp-", 0o644, []byte("old")); err != nil {
		t.Fatal(err)
	}
	// A fill that fails half-way leaves the old file and no temp file.
	boom := errors.New("boom")
	err := atomicfile.Write(name, ".f.tmp-", 0o644, func(w io.Writer) error {
		if _, err := w.Write([]byte("ne")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if err := atomicfile.WriteBytes(name, ".f.tmp-", 0o600, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(name)
	if b, _ := os.ReadFile(name); string(b) != "new" || err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file %q mode %v", b, st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	// Folders that are not there are made (the rule for every output).
	if err := atomicfile.WriteBytes(filepath.Join(dir, "no", "such", "f"), "x", 0o644, []byte("deep")); err != nil {
		t.Error(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "no", "such", "f")); string(b) != "deep" {
		t.Errorf("into missing folders: wrote %q", b)
	}
	// A file in the way: an error naming the file, and nothing written.
	err = atomicfile.WriteBytes(filepath.Join(dir, "f", "x", "g"), "x", 0o644, nil)
	if !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), filepath.Join(dir, "f", "x", "g")) {
		t.Errorf("through a file: %v, want ENOTDIR naming the output", err)
	}
}

// TempDir makes the folders above the output it is for, and its directory
// beside that output.
func TestTempDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b", "c.tar")
	tmp, err := atomicfile.TempDir(out, ".c-")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(tmp) != filepath.Dir(out) || !strings.HasPrefix(filepath.Base(tmp), ".c-") {
		t.Errorf("TempDir(%s) = %s, want a .c-* beside it", out, tmp)
	}
	if st, err := os.Stat(tmp); err != nil || !st.IsDir() {
		t.Errorf("TempDir made no directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.TempDir(filepath.Join(dir, "file", "c.tar"), ".c-"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("TempDir through a file: %v, want ENOTDIR", err)
	}
}

// CheckParent tells, changing nothing, whether MkdirParent could make
// the folder of a name: not when a path above it is a file.
func TestCheckParent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{
		filepath.Join(dir, "out.yaml"):            true,
		filepath.Join(dir, "a", "b", "out.yaml"):  true,
		filepath.Join(file, "out.yaml"):           false,
		filepath.Join(file, "deeper", "out.yaml"): false,
	} {
		err := atomicfile.CheckParent(name)
		if (err == nil) != ok {
			t.Errorf("CheckParent(%s) = %v, want ok %v", name, err, ok)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("CheckParent changed %s: %v", dir, entries)
	}
}

// SyncTree syncs a tree of files and folders, and says when it cannot.
func TestSyncTree(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.SyncTree(dir); err != nil {
		t.Errorf("SyncTree: %v", err)
	}
	if err := atomicfile.SyncTree(filepath.Join(dir, "missing")); err == nil {
		t.Error("SyncTree of a missing folder succeeded")
	}
}
