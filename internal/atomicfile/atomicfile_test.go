package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
	// A directory that is not there: an error naming the file.
	if err := atomicfile.WriteBytes(filepath.Join(dir, "no", "f"), "x", 0o644, nil); err == nil {
		t.Error("wrote into a missing directory")
	}
}
