package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// countingSyncer records what it is asked to sync, and syncs nothing.
type countingSyncer struct {
	files, dirs, whole []string
}

func (c *countingSyncer) syncer(withFS bool) syncer {
	s := syncer{
		file: func(name string) error { c.files = append(c.files, name); return nil },
		dir:  func(name string) error { c.dirs = append(c.dirs, name); return nil },
	}
	if withFS {
		s.fs = func(dir string) error { c.whole = append(c.whole, dir); return nil }
	}
	return s
}

// writeTree writes files files under dir, perDir to a folder two deep
// (dir/aN/b), and a link, which the sync of its folder makes durable;
// it gives the regular files and the folders, dir included.
func writeTree(t *testing.T, dir string, files, perDir int) (wantFiles, wantDirs []string) {
	t.Helper()
	wantDirs = []string{dir}
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprint("a", i/perDir), "b")
		if i%perDir == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			wantDirs = append(wantDirs, filepath.Dir(sub), sub)
		}
		name := filepath.Join(sub, fmt.Sprint("f", i))
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		wantFiles = append(wantFiles, name)
	}
	if err := os.Symlink("a0/b/f0", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return wantFiles, wantDirs
}

// A tree of up to oneByOneMax files and folders is synced entry by
// entry, every regular file and every folder once, and not the whole
// file system; one entry more and it is one syncfs of the tree's file
// system, where there is a syncfs. Without one, every tree is synced
// entry by entry.
func TestSyncTreeSyncsEveryEntry(t *testing.T) {
	for _, tc := range []struct {
		name          string
		files, perDir int
		entries       int // files and folders, the top one included
		withFS, whole bool
	}{
		{"one file", 1, 1, 4, true, false},
		{"nested", 7, 2, 16, true, false},
		{"at the limit", oneByOneMax - 3, 100, oneByOneMax, true, false},
		{"one over the limit", oneByOneMax - 2, 100, oneByOneMax + 1, true, true},
		{"large", 60, 3, 101, true, true},
		{"large without syncfs", 60, 3, 101, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			wantFiles, wantDirs := writeTree(t, dir, tc.files, tc.perDir)
			if n := len(wantFiles) + len(wantDirs); n != tc.entries {
				t.Fatalf("the tree has %d entries, the case says %d", n, tc.entries)
			}
			var c countingSyncer
			if err := c.syncer(tc.withFS).tree(dir); err != nil {
				t.Fatal(err)
			}
			if tc.whole {
				if !slices.Equal(c.whole, []string{dir}) || c.files != nil || c.dirs != nil {
					t.Errorf("syncfs of %v, %d files and %d folders synced; want one syncfs of %s and nothing else",
						c.whole, len(c.files), len(c.dirs), dir)
				}
				return
			}
			if c.whole != nil {
				t.Errorf("syncfs of %v, want none", c.whole)
			}
			if d := syncedDiff(dir, c.files, wantFiles); d != "" {
				t.Errorf("files: %s", d)
			}
			if d := syncedDiff(dir, c.dirs, wantDirs); d != "" {
				t.Errorf("folders: %s", d)
			}
		})
	}
}

// syncedDiff says which of want were not synced once, by their names
// under dir, or "".
func syncedDiff(dir string, synced, want []string) string {
	count := map[string]int{}
	for _, name := range synced {
		count[name]++
	}
	var wrong []string
	for _, name := range want {
		if n := count[name]; n != 1 {
			rel, _ := filepath.Rel(dir, name)
			wrong = append(wrong, fmt.Sprintf("%s synced %d times", rel, n))
		}
		delete(count, name)
	}
	for name := range count {
		wrong = append(wrong, name+" is not in the tree")
	}
	slices.Sort(wrong)
	return strings.Join(wrong, ", ")
}

// A sync that fails fails SyncTree, whichever way the tree is synced.
func TestSyncTreeFails(t *testing.T) {
	boom := errors.New("boom")
	fail := func(string) error { return boom }
	for name, s := range map[string]syncer{
		"file":   {file: fail, dir: SyncDir},
		"folder": {file: syncFile, dir: fail},
		"syncfs": {file: syncFile, dir: SyncDir, fs: fail},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, 30, 10)
			if name != "syncfs" {
				s.fs = nil
			}
			if err := s.tree(dir); !errors.Is(err, boom) {
				t.Errorf("SyncTree = %v, want boom", err)
			}
		})
	}
}

// The real syncs, both ways, on the file system of the temp folder.
func TestSyncTreeSmallAndLarge(t *testing.T) {
	for _, files := range []int{1, 3 * oneByOneMax} {
		dir := t.TempDir()
		writeTree(t, dir, files, 10)
		if err := SyncTree(dir); err != nil {
			t.Errorf("SyncTree of %d files: %v", files, err)
		}
	}
}
