package source_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// ReadTree lists a local folder on disk (folder.Open), to be read as it
// is built, and reads a file, stdin or a remote source into memory.
func TestReadTreeForms(t *testing.T) {
	const doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	dir := filepath.Join(t.TempDir(), "my-addon")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sub", "one.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, path, wantName, wantFile string
		onDisk                         bool
	}{
		{"folder", dir, "my-addon", "sub/one.yaml", true},
		{"file:// folder", "file://" + dir, "my-addon", "sub/one.yaml", true},
		{"file", file, "one", "one.yaml", false},
		{"stdin", "-", "addon", "stdin.yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bt, err := source.ReadTree(ctx, tc.path, bytes.NewReader([]byte(doc)), source.Options{}, safetree.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Close()
			if bt.Name != tc.wantName {
				t.Errorf("name %q, want %q", bt.Name, tc.wantName)
			}
			// A folder's listing holds none of its files' bytes.
			if mem, ok := bt.FS.(*filetree.FS); !ok {
				t.Errorf("tree of type %T", bt.FS)
			} else if onDisk := mem.InMemory() == 0; onDisk != tc.onDisk {
				t.Errorf("%s: read from disk %v, want %v", tc.path, onDisk, tc.onDisk)
			}
			if b, err := fs.ReadFile(bt.FS, tc.wantFile); err != nil || string(b) != doc {
				t.Errorf("%s: %q, %v", tc.wantFile, b, err)
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		bt, err := source.ReadTree(ctx, dir, nil, source.Options{}, safetree.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := bt.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.ReadFile(bt.FS, "sub/one.yaml"); err == nil {
			t.Error("read a closed folder")
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := source.ReadTree(ctx, filepath.Join(dir, "nosuch"), nil, source.Options{}, safetree.Limits{})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
}
