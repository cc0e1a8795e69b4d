package filetree_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

func TestFSIsAnFS(t *testing.T) {
	b := filetree.NewBuilder()
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
	b := filetree.NewBuilder()
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
		if _, err := fs.ReadFile(fsys, name); !errors.Is(err, filetree.ErrDropped) {
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

// onDisk writes data to a new file in dir for WriteFileOnDisk.
func onDisk(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The Builder deletes a file on disk when the last node reading it leaves
// the tree, whichever way it leaves; a dropped file was taken by the
// caller and stays.
func TestOnDiskFilesFollowTheTree(t *testing.T) {
	dir := t.TempDir()
	b := filetree.NewBuilder()
	sum := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	add := func(name, data string) string {
		t.Helper()
		p := onDisk(t, dir, strings.ReplaceAll(name, "/", "_"), data)
		if err := b.WriteFileOnDisk(name, p, int64(len(data)), 0o644, sum(data)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	removed := add("removed", "r")
	replaced := add("replaced", "x")
	inDir := add("d/in", "i")
	shared := add("shared", "s")
	dropped := add("dropped", "dd")
	kept := add("kept", "k")

	b.Remove("removed")
	if err := b.WriteFile("replaced", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile("d", []byte("a file over the directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFile("shared", "copy", 0o644); err != nil {
		t.Fatal(err)
	}
	b.Remove("shared")                                        // the copy still reads it
	if err := b.CopyFile("kept", "kept", 0o755); err != nil { // over itself
		t.Fatal(err)
	}
	if err := b.Drop("dropped"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{removed: false, replaced: false, inDir: false, shared: true, dropped: true, kept: true} {
		if exists(p) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(p), !want, want)
		}
	}
	b.Remove("copy")
	if exists(shared) {
		t.Error("shared file kept after its last node left")
	}
	fsys := b.FS()
	if got, err := fs.ReadFile(fsys, "kept"); err != nil || string(got) != "k" {
		t.Errorf("kept = %q, %v", got, err)
	}
}

// Open streams a file on disk and reads it at offsets, within its size;
// a file whose size changed on disk is an error.
func TestOpenOnDisk(t *testing.T) {
	dir := t.TempDir()
	b := filetree.NewBuilder()
	const data = "0123456789"
	p := onDisk(t, dir, "f", data)
	if err := b.WriteFileOnDisk("f", p, int64(len(data)), 0o644, sha256.Sum256([]byte(data))); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink("f", "l"); err != nil {
		t.Fatal(err)
	}
	fsys := b.FS()
	if err := fstest.TestFS(fsys, "f", "l"); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open("l")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := f.(io.ReaderAt).ReadAt(buf, 3); n != 4 || err != nil || string(buf) != "3456" {
		t.Errorf("ReadAt = %d %q %v", n, buf, err)
	}
	if n, err := f.(io.ReaderAt).ReadAt(buf, 8); n != 2 || err != io.EOF {
		t.Errorf("ReadAt past the end = %d %v", n, err)
	}
	f.Close()
	if err := os.WriteFile(p, []byte(data+"more"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open("f"); err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Errorf("Open of a grown file: %v", err)
	}
	if _, err := fs.ReadFile(fsys, "f"); err == nil {
		t.Error("ReadFile of a grown file: no error")
	}
}

// SpillPast keeps files in memory up to the budget and appends the rest
// to one file in the directory; the tree reads the same either way, by
// every reader, and counts what it holds in memory.
func TestSpillPast(t *testing.T) {
	dir := t.TempDir()
	b := filetree.NewBuilder()
	b.SpillPast(dir, 10)
	files := map[string]string{"a": "12345", "b": "67890", "c": "spilled", "d/e": "also spilled", "empty": ""}
	for _, name := range []string{"a", "b", "c", "d/e", "empty"} {
		if err := b.WriteFileSum(name, []byte(files[name]), 0o644, sha256.Sum256([]byte(files[name]))); err != nil {
			t.Fatal(err)
		}
	}
	if b.InMemory() != 10 {
		t.Errorf("InMemory = %d, want 10", b.InMemory())
	}
	// Reading while building, and freeing room by replacing a file.
	if got, ok := b.ReadFile("c"); !ok || string(got) != "spilled" {
		t.Errorf("Builder.ReadFile(c) = %q, %v", got, ok)
	}
	b.Remove("a")
	if err := b.WriteFile("f", []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	files["f"] = "in"
	delete(files, "a")
	if err := b.CopyFile("c", "g", 0o600); err != nil {
		t.Fatal(err)
	}
	files["g"] = files["c"]
	fsys := b.FS()
	if fsys.InMemory() != 7 {
		t.Errorf("InMemory = %d, want 7 (b and f)", fsys.InMemory())
	}
	held, err := os.ReadDir(dir)
	if err != nil || len(held) != 1 {
		t.Fatalf("%v in the spill directory (%v), want one file", held, err)
	}
	if err := fstest.TestFS(fsys, "b", "c", "d/e", "f", "g", "empty"); err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		if got, err := fs.ReadFile(fsys, name); err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	f, err := fsys.Open("g")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, err := f.(io.ReaderAt).ReadAt(buf, 2); n != 3 || err != nil || string(buf) != "ill" {
		t.Errorf("ReadAt = %d %q %v", n, buf, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(fsys, "c"); err == nil {
		t.Error("read a spilled file after Close")
	}
	if got, err := fs.ReadFile(fsys, "b"); err != nil || string(got) != "67890" {
		t.Errorf("ReadFile(b) after Close = %q, %v", got, err)
	}
}

// ReadInto returns the tree's own bytes for a file in memory and reads a
// file on disk into the buffer when it fits, into a new slice when not.
func TestReadInto(t *testing.T) {
	dir := t.TempDir()
	b := filetree.NewBuilder()
	b.SpillPast(dir, 3)
	mem := []byte("mem")
	for name, data := range map[string][]byte{"mem": mem, "packed": []byte("packed"), "big": []byte("too big for the buffer")} {
		if err := b.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := b.FS()
	defer fsys.Close()
	buf := make([]byte, 0, 8)
	got, err := filetree.ReadInto(fsys, "mem", buf)
	if err != nil || string(got) != "mem" || &got[0] != &mem[0] {
		t.Errorf("mem: %q, %v (own bytes: %v)", got, err, err == nil && &got[0] == &mem[0])
	}
	got, err = filetree.ReadInto(fsys, "packed", buf)
	if err != nil || string(got) != "packed" || &got[0] != &buf[:1][0] {
		t.Errorf("packed: %q, %v, want it in the buffer", got, err)
	}
	got, err = filetree.ReadInto(fsys, "big", buf)
	if err != nil || string(got) != "too big for the buffer" {
		t.Errorf("big: %q, %v", got, err)
	}
	if _, err := filetree.ReadInto(fsys, "missing", buf); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if got, err := filetree.ReadInto(fstest.MapFS{"f": {Data: []byte("x")}}, "f", buf); err != nil || string(got) != "x" {
		t.Errorf("another fs.FS: %q, %v", got, err)
	}
}
