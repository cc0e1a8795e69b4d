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
	// The folders made above the target go too (unpack -o new/x left new/).
	err := WriteDir(b.FS(), filepath.Join(parent, "new", "deeper", "out"))
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

// An existing directory is filled, not replaced: it keeps its inode, its
// mode and its place, and nothing is made beside it. Replacing it failed
// on a mount point (a container's volume: EBUSY), on the current directory
// (-o .: EINVAL), under a parent the user may not write, and replaced a
// symlink to a directory with a directory of its own.
func TestWriteDirFillsExistingDirectory(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o710); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(dir)
		w, err := NewWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Nothing beside it: a parent it may not write does not matter.
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("made beside the target: %v", entries)
		}
		if err := w.Commit(tree(t)); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(dir)
		if err != nil || !os.SameFile(before, after) || after.Mode().Perm() != 0o710 {
			t.Errorf("target replaced: %v, mode %v, %v", os.SameFile(before, after), after.Mode(), err)
		}
		checkTree(t, dir)
	})
	t.Run("not empty", func(t *testing.T) {
		// Refused untouched: not even what looks like a dead writer's
		// temp directory is removed from a directory with content.
		dir := t.TempDir()
		for _, name := range []string{".addonpkg-out.tmp-1/keep", "mine"} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteDir(tree(t), dir); !errors.Is(err, ErrNotEmpty) {
			t.Errorf("err = %v, want ErrNotEmpty", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".addonpkg-out.tmp-1/keep")); err != nil {
			t.Errorf("a directory with content was swept: %v", err)
		}
	})
	t.Run("current directory", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := WriteDir(tree(t), "."); err != nil {
			t.Fatal(err)
		}
		checkTree(t, dir)
	})
	t.Run("symlink to a directory", func(t *testing.T) {
		parent := t.TempDir()
		real, link := filepath.Join(parent, "real"), filepath.Join(parent, "link")
		if err := os.Mkdir(real, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", link); err != nil {
			t.Fatal(err)
		}
		if err := WriteDir(tree(t), link); err != nil {
			t.Fatal(err)
		}
		if target, err := os.Readlink(link); err != nil || target != "real" {
			t.Errorf("the link was replaced: %q, %v", target, err)
		}
		checkTree(t, real)
	})
	t.Run("symlink to nothing", func(t *testing.T) {
		parent := t.TempDir()
		link := filepath.Join(parent, "link")
		if err := os.Symlink("nowhere", link); err != nil {
			t.Fatal(err)
		}
		err := WriteDir(tree(t), link)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), link) {
			t.Errorf("err = %v, want a refusal naming %s", err, link)
		}
		if target, err := os.Readlink(link); err != nil || target != "nowhere" {
			t.Errorf("the link was replaced: %q, %v", target, err)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("left behind: %v", entries)
		}
	})
}

// Two writers filling one existing directory: the second to commit finds
// it no longer empty and leaves the first's tree as it was.
func TestWritersFillingOneDirectory(t *testing.T) {
	dir := t.TempDir()
	w1, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := NewWriter(dir)
	if err != nil {
		t.Fatalf("a live writer's temp directory made the target look full: %v", err)
	}
	if err := w1.Commit(tree(t)); err != nil {
		t.Fatal(err)
	}
	b := filetree.NewBuilder()
	if err := b.WriteFile("a.yaml", []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w2.Commit(b.FS()); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second commit: %v, want ErrNotEmpty", err)
	}
	checkTree(t, dir)
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("entries: %v, want the first tree's three", entries)
	}
}

// checkTree checks that dir holds tree(t).
func checkTree(t *testing.T, dir string) {
	t.Helper()
	for name, want := range map[string]string{"a.yaml": "a", "bin/run.sh": "#!/bin/sh\n", "deep/er/x.yaml": "x", "deep/link.yaml": "a"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("entries: %v, want a.yaml, bin, deep", entries)
	}
}

// A target whose name takes nearly all of NAME_MAX's 255 bytes can be
// written: its temp directory's name, ".NAME.tmp-N", was longer than the
// name itself and failed with ENAMETOOLONG.
func TestWriteDirLongName(t *testing.T) {
	parent := t.TempDir()
	for _, base := range []string{strings.Repeat("a", 255), strings.Repeat("é", 127)} {
		dir := filepath.Join(parent, base)
		if err := WriteDir(tree(t), dir); err != nil {
			t.Fatalf("%d bytes: %v", len(base), err)
		}
		checkTree(t, dir)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 2 {
		t.Errorf("left beside: %v", entries)
	}
}
