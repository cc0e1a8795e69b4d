package memfs_test

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/memfs"
)

func TestFSIsAnFS(t *testing.T) {
	b := memfs.NewBuilder()
	for _, err := range []error{
		b.WriteFile("a.yaml", []byte("a"), 0o644),
		b.WriteFileSum("d/b.yaml", []byte("bb"), 0o755, sha256.Sum256([]byte("bb"))),
		b.Symlink("../a.yaml", "d/l.yaml"),
		b.Mkdir("empty", 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := fstest.TestFS(b.FS(), "a.yaml", "d/b.yaml", "d/l.yaml", "empty"); err != nil {
		t.Fatal(err)
	}
}

// A dropped file keeps its place, size and digest; its bytes are gone,
// also from a copy made after the drop.
func TestDrop(t *testing.T) {
	b := memfs.NewBuilder()
	sum := sha256.Sum256([]byte("hello"))
	if err := b.WriteFile("plain", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Drop("plain"); err == nil {
		t.Error("dropped a file without a digest")
	}
	if err := b.WriteFileSum("f", []byte("hello"), 0o644, sum); err != nil {
		t.Fatal(err)
	}
	if err := b.Drop("f"); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFile("f", "g", 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := b.FS()
	for _, name := range []string{"f", "g"} {
		if _, err := fs.ReadFile(fsys, name); !errors.Is(err, memfs.ErrDropped) {
			t.Errorf("ReadFile(%s) = %v, want ErrDropped", name, err)
		}
		if st, err := fs.Stat(fsys, name); err != nil || st.Size() != 5 {
			t.Errorf("Stat(%s) = %v, %v; want size 5", name, st, err)
		}
		if got, ok := fsys.SHA256(name); !ok || got != sum {
			t.Errorf("SHA256(%s) = %x, %v", name, got, ok)
		}
	}
	if fsys.Size() != 11 {
		t.Errorf("Size = %d, want 11 (dropped bytes still count)", fsys.Size())
	}
	if _, ok := fsys.SHA256("plain"); ok {
		t.Error("a digest for a file written without one")
	}
}
