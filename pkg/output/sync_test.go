package output

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// A tree is synced whole before the rename that publishes it, and the
// directory the rename changed is synced after it, so that a crash
// leaves dir absent or complete, never holding empty files: for a new
// dir, its parent; for an existing one filled in place, dir itself. A
// file handed over early (WriteFile) is in the sync too.
func TestCommitSyncsBeforeAndAfterRename(t *testing.T) {
	var events []string
	origTree, origDir := syncTree, syncDir
	t.Cleanup(func() { syncTree, syncDir = origTree, origDir })
	var target string
	syncTree = func(tmp string) error {
		// Everything is in the temp tree, nothing in the target yet.
		for _, name := range []string{"a.yaml", "early.yaml", "deep/er/x.yaml"} {
			if _, err := os.Stat(filepath.Join(tmp, name)); err != nil {
				t.Errorf("syncTree before %s is written: %v", name, err)
			}
		}
		if _, err := os.Stat(filepath.Join(target, "a.yaml")); err == nil {
			t.Error("syncTree after the tree was published")
		}
		events = append(events, "tree")
		return origTree(tmp)
	}
	syncDir = func(dir string) error {
		events = append(events, "dir "+dir)
		return origDir(dir)
	}
	parent := t.TempDir()
	for _, tc := range []struct {
		name, dir, synced string
	}{
		{"new", filepath.Join(parent, "new"), parent},
		{"existing", filepath.Join(parent, "existing"), filepath.Join(parent, "existing")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, target = nil, tc.dir
			if tc.name == "existing" {
				if err := os.Mkdir(tc.dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			w, err := NewWriter(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			w.WriteFile("early.yaml", []byte("e"), 0o644)
			b := filetree.NewBuilder()
			for _, name := range []string{"a.yaml", "early.yaml", "deep/er/x.yaml"} {
				if err := b.WriteFile(name, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Commit(b.FS()); err != nil {
				t.Fatal(err)
			}
			if want := []string{"tree", "dir " + tc.synced}; !slices.Equal(events, want) {
				t.Errorf("syncs %q, want %q", events, want)
			}
		})
	}
}
