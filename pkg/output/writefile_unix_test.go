//go:build unix

package output

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// writeData makes files as os.Root.WriteFile would, and refuses what
// os.Root would not do either: a name of more than one component, and a
// link in the file's place (it is not followed).
func TestWriteDataConfined(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	d, err := w.dirOf("sub")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.writeData(d, "sub", "f.yaml", []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(w.tmp, "sub", "f.yaml"))
	if err != nil || string(b) != "a: 1\n" {
		t.Fatalf("written: %q, %v", b, err)
	}
	// Written twice, the file is replaced, not appended to.
	if err := w.writeData(d, "sub", "f.yaml", []byte("b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.tmp, "sub", "f.yaml")); string(b) != "b" {
		t.Fatalf("rewritten: %q", b)
	}
	for _, name := range []string{"", ".", "..", "a/b", "../escape"} {
		if err := w.writeData(d, "sub", name, []byte("x"), 0o644); err == nil {
			t.Errorf("writeData(%q) succeeded", name)
		}
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(w.tmp, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	if err := w.writeData(d, "sub", "link", []byte("overwritten"), 0o644); err == nil {
		t.Error("writeData followed a link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link's target changed: %q", b)
	}
}

// The written tree follows the umask as a whole: under 077 its root is
// 0700 like its subdirectories (and its files 0600), not a 0755 root
// around private content; under 022 everything is as usual.
func TestWriteDirUmask(t *testing.T) {
	for _, c := range []struct {
		umask          int
		dir, file, exe os.FileMode
	}{
		{0o077, 0o700, 0o600, 0o700},
		{0o022, 0o755, 0o644, 0o755},
	} {
		old := syscall.Umask(c.umask)
		dir := filepath.Join(t.TempDir(), "out")
		err := WriteDir(tree(t), dir)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]os.FileMode{".": c.dir, "deep": c.dir, "a.yaml": c.file, "bin/run.sh": c.exe} {
			st, err := os.Lstat(filepath.Join(dir, name))
			if err != nil || st.Mode().Perm() != want {
				t.Errorf("umask %03o: %s: %v, %v; want %v", c.umask, name, st.Mode().Perm(), err, want)
			}
		}
	}
}
