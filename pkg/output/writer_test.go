package output

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// Files handed over early end up in the tree exactly once, with the rest
// written at Commit.
func TestWriterEarlyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("deep/er/x.yaml", []byte("x"), 0o600)
	w.WriteFile("bin/run.sh", []byte("#!/bin/sh\n"), 0o755)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("target exists before Commit: %v", err)
	}
	if err := w.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.yaml": "a", "bin/run.sh": "#!/bin/sh\n", "deep/er/x.yaml": "x", "deep/link.yaml": "a"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "bin/run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("bin/run.sh mode: %v %v", st.Mode(), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temp directories left: %v", leftovers)
	}
}

// Abort, and a Commit whose tree lacks an early file, leave nothing.
func TestWriterNothingHalfWritten(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")

	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("a.yaml", []byte("a"), 0o644)
	w.Abort()

	w, err = NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("not/in/the/tree.yaml", []byte("?"), 0o644)
	if err := w.Commit(tree(t)); err == nil || !strings.Contains(err.Error(), "not/in/the/tree.yaml") {
		t.Errorf("Commit with a stray early file: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// Remove takes back a file handed over before: a later entry replaces it,
// and a copy (hard link) made of it earlier keeps the old bytes.
func TestWriterRemove(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile("a", []byte("one"), 0o644)
	w.Copy("b", "a", 0o644)
	w.WriteFile("d/x", []byte("x"), 0o644)
	w.Remove("a")
	w.Remove("d")
	w.WriteFile("a", []byte("two"), 0o644)
	w.WriteFile("d", []byte("file now"), 0o644)
	b := filetree.NewBuilder()
	for name, body := range map[string]string{"a": "two", "b": "one", "d": "file now"} {
		if err := b.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(b.FS()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "two", "b": "one", "d": "file now"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
}

// Two writers to one target that does not exist yet: the second to commit
// finds the first's tree and says so (ErrNotEmpty), leaving it as it was.
// A file that appeared at the target meanwhile is kept, not removed.
func TestWritersToOneNewTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w1, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w1.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	if err := w2.Commit(tree(t)); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second commit: %v, want ErrNotEmpty", err)
	}
	checkTree(t, dir)

	file := filepath.Join(t.TempDir(), "out")
	w, err := NewWriter(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(tree(t)); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), file) {
		t.Errorf("commit over a file that appeared: %v, want fs.ErrExist naming it", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "someone else's" {
		t.Errorf("the file that appeared: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
