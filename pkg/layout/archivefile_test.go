package layout_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A compressed archive is decompressed into an unnamed temporary file: it
// reads as the bytes it compresses, leaves nothing in the temporary
// directory, and a bomb stops at the bound, a LimitError of the image
// bytes. An uncompressed one is the file itself.
func TestOpenArchiveFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	content := bytes.Repeat([]byte("addon "), 10_000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(content)
	zw.Close()
	plain, packed := filepath.Join(dir, "a.tar"), filepath.Join(dir, "a.tar.gz")
	for name, b := range map[string][]byte{plain: content, packed: gz.Bytes()} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		file       string
		compressed bool
	}{{plain, false}, {packed, true}} {
		f, compressed, err := layout.OpenArchiveFile(c.file, int64(len(content)))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil || compressed != c.compressed || !bytes.Equal(b, content) {
			t.Errorf("%s: compressed %v, %d bytes, %v; want %v, the %d bytes", c.file, compressed, len(b), err, c.compressed, len(content))
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}

	_, _, err := layout.OpenArchiveFile(packed, int64(len(content))-1)
	var le *safetree.LimitError
	if !errors.As(err, &le) || le.Which != safetree.LimitImageBytes {
		t.Errorf("over the bound: %v, want a LimitError of %s", err, safetree.LimitImageBytes)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory after the refusal: %v", left)
	}
}

// A compressed oci-archive that cannot be decompressed because the
// temporary directory fails is an error of that directory, not of the
// archive: it was "open oci-archive FILE: no such file or directory",
// the archive taken for missing.
func TestOpenArchiveTempDirErrorNamesTheTempDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	t.Setenv("TMPDIR", missing)
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("addon"))
	zw.Close()
	if err := os.WriteFile(file, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := layout.OpenArchive(file)
	var pe *fs.PathError
	if !errors.As(err, &pe) || filepath.Dir(pe.Path) != missing {
		t.Fatalf("OpenArchive(%s) with TMPDIR %s missing: %v, want the temporary directory's *fs.PathError", file, missing, err)
	}
}
