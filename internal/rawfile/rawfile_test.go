package rawfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteTemp(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	h := sha256.New()
	name, err := WriteTemp(dir, "spill-", bytes.NewReader(data), int64(len(data)), make([]byte, 4096), func(p []byte) { h.Write(p) })
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(name) != dir || !strings.HasPrefix(filepath.Base(name), "spill-") {
		t.Fatalf("name %s is not spill-* in %s", name, dir)
	}
	got, err := os.ReadFile(name)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content differs (%d bytes, %v)", len(got), err)
	}
	if sum := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), sum[:]) {
		t.Fatal("onWrite did not see every byte once")
	}
	if runtime.GOOS != "windows" {
		if st, _ := os.Stat(name); st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", st.Mode().Perm())
		}
	}
	// Only size bytes are taken, even when r has more.
	name2, err := WriteTemp(dir, "spill-", bytes.NewReader(data), 7, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name2); string(b) != "0123456" {
		t.Fatalf("got %q", b)
	}
	if name2 == name {
		t.Fatal("two temp files got one name")
	}
}

// A reader shorter than size, or one that fails, leaves nothing behind.
func TestWriteTempFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteTemp(dir, "spill-", strings.NewReader("short"), 100, nil, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short reader: %v, want io.ErrUnexpectedEOF", err)
	}
	boom := errors.New("boom")
	if _, err := WriteTemp(dir, "spill-", io.MultiReader(strings.NewReader("abc"), errReader{boom}), 100, nil, nil); !errors.Is(err, boom) {
		t.Fatalf("failing reader: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
	if _, err := WriteTempBytes(filepath.Join(dir, "missing"), "x-", []byte("a")); err == nil {
		t.Fatal("a temp file in a missing directory")
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestReadInto(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	if err := ReadInto(p, b); err != nil || string(b) != "hello" {
		t.Fatalf("ReadInto = %q, %v", b, err)
	}
	// A file that is not the size it had is an error: it changed.
	for _, size := range []int{4, 6, 0} {
		if err := ReadInto(p, make([]byte, size)); err == nil {
			t.Errorf("ReadInto with size %d succeeded", size)
		}
	}
	if err := ReadInto(filepath.Join(dir, "missing"), b); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
		if err := ReadInto(link, b); err == nil {
			t.Error("ReadInto followed a link")
		}
	}
}
