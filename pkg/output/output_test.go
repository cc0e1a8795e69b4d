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

func tree(t *testing.T) *filetree.FS {
	t.Helper()
	b := filetree.NewBuilder()
	for _, err := range []error{
		b.WriteFile("a.yaml", []byte("a"), 0o644),
		b.WriteFile("bin/run.sh", []byte("#!/bin/sh\n"), 0o755),
		b.WriteFile("deep/er/x.yaml", []byte("x"), 0o600),
		b.Symlink("../a.yaml", "deep/link.yaml"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.FS()
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteDir(tree(t), dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.yaml": "a", "bin/run.sh": "#!/bin/sh\n", "deep/er/x.yaml": "x", "deep/link.yaml": "a"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "deep/link.yaml")); err != nil || target != "../a.yaml" {
		t.Errorf("link: %q, %v", target, err)
	}
	st, _ := os.Stat(filepath.Join(dir, "bin/run.sh"))
	if st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v, want 0755", st.Mode().Perm())
	}
	st, _ = os.Stat(filepath.Join(dir, "deep/er/x.yaml"))
	if st.Mode().Perm() != 0o644 {
		t.Errorf("x.yaml mode %v, want normalized 0644", st.Mode().Perm())
	}
}

// An existing empty directory is filled; one with content is refused and
// left as it was.
func TestWriteDirTarget(t *testing.T) {
	empty := t.TempDir()
	if err := WriteDir(tree(t), empty); err != nil {
		t.Fatalf("empty target: %v", err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteDir(tree(t), full)
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("non-empty target: %v, want ErrNotEmpty", err)
	}
	entries, _ := os.ReadDir(full)
	if len(entries) != 1 {
		t.Errorf("target changed: %v", entries)
	}
}

// A link leading out of the tree is refused and nothing is left: no target
// and no temp directory beside it.
func TestWriteDirAtomicOnFailure(t *testing.T) {
	b := filetree.NewBuilder()
	_ = b.WriteFile("a.yaml", []byte("a"), 0o644)
	_ = b.Symlink("../../etc/passwd", "escape")
	parent := t.TempDir()
	err := WriteDir(b.FS(), filepath.Join(parent, "out"))
	if err == nil || !strings.Contains(err.Error(), "leads out of the tree") {
		t.Fatalf("err = %v, want a refused link", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// Modes are reduced on disk: no setuid, setgid, sticky or group- and
// world-writable bits; executables 0755, the rest 0644.
func TestWriteDirModesReduced(t *testing.T) {
	b := filetree.NewBuilder()
	for name, perm := range map[string]fs.FileMode{"suid": 0o777 | fs.ModeSetuid | fs.ModeSticky, "ww": 0o666, "x": 0o700, "ro": 0o400} {
		if err := b.WriteFile(name, []byte(name), perm); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteDir(b.FS(), dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"suid": 0o755, "ww": 0o644, "x": 0o755, "ro": 0o644} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || st.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", name, st.Mode(), err, want)
		}
	}
}
