package folder_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Every limit is checked from the listing, before a file is read, by
// both readers, with the same error.
func TestLoadLimits(t *testing.T) {
	tree := map[string]string{
		"a.yaml":           cm,
		"b.yaml":           cm + cm,
		"sub/deep/c.yaml":  cm,
		"sub/other/d.yaml": cm,
	}
	for _, tc := range []struct {
		name   string
		limits safetree.Limits
		which  safetree.LimitID
		entry  string
	}{
		{"file size", safetree.Limits{MaxFileBytes: int64(len(cm)) + 1}, safetree.LimitFileBytes, "b.yaml"},
		{"add-on size", safetree.Limits{MaxAddonBytes: int64(3*len(cm)) + 1}, safetree.LimitAddonBytes, "sub/deep/c.yaml"},
		{"entries", safetree.Limits{MaxEntries: 4}, safetree.LimitEntries, ""},
		{"path length", safetree.Limits{MaxPathLength: 12}, safetree.LimitPathLength, "sub/deep/c.yaml"},
		{"depth", safetree.Limits{MaxDepth: 2}, safetree.LimitDepth, "sub/deep/c.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tree)
			var loadErr, openErr error
			_, loadErr = folder.Load(dir, tc.limits)
			if tr, err := folder.Open(dir, tc.limits); err == nil {
				tr.Close()
			} else {
				openErr = err
			}
			for name, err := range map[string]error{"Load": loadErr, "Open": openErr} {
				var le *safetree.LimitError
				if !errors.As(err, &le) || le.Which != tc.which || !errors.Is(err, safetree.ErrLimit) {
					t.Errorf("%s: err = %v, want the %s limit", name, err, tc.which)
					continue
				}
				if tc.entry != "" && le.Entry != tc.entry {
					t.Errorf("%s: limit error names %q, want %q", name, le.Entry, tc.entry)
				}
			}
			if loadErr != nil && openErr != nil && loadErr.Error() != openErr.Error() {
				t.Errorf("Load says %q, Open says %q", loadErr, openErr)
			}
			// Within the limits, both read the tree.
			if _, err := folder.Load(dir, safetree.Limits{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A folder listed by Open reads as the tree LoadDir reads into memory:
// the same entries, modes, sizes and bytes, in the same order, and the
// tree passes the standard fs.FS conformance checks.
func TestOpenSameAsLoad(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.yaml":           cm,
		"z/b.yaml":         cm + "# b\n",
		"z/y/c.json":       `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
		"B.yaml":           cm,
		"real/x.yaml":      cm,
		"notes.txt":        "ignored",
		".addonignore":     "*.txt\n",
		"sub/empty/":       "",
		"sub/kept/e.yaml":  cm,
		"sub/kept/f.yaml~": "backup",
		"sub/kept/empty":   "",
	})
	if err := os.Chmod(filepath.Join(dir, "a.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "real", filepath.Join(dir, "alias"))
	symlink(t, "../a.yaml", filepath.Join(dir, "z", "link.yaml"))

	mem, err := folder.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if got, want := describe(t, tree), describe(t, mem); !slices.Equal(got, want) {
		t.Errorf("Open lists\n%s\nLoadDir\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tree.Size() != mem.Size() || tree.Count() != mem.Count() {
		t.Errorf("Open: %d bytes in %d entries, LoadDir: %d in %d", tree.Size(), tree.Count(), mem.Size(), mem.Count())
	}
	var files []string
	for _, e := range entries(t, mem) {
		if !strings.HasSuffix(e, "/") {
			files = append(files, e)
		}
	}
	if err := fstest.TestFS(tree, files...); err != nil {
		t.Error(err)
	}
	if _, err := fs.ReadLink(tree, "a.yaml"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadLink of a file: %v, want ErrInvalid", err)
	}
	for _, bad := range []string{"nosuch.yaml", "notes.txt", "../x", "/a.yaml"} {
		if _, err := tree.Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// describe lists every entry of fsys with its mode, size and content
// (read both ways a tree is read: whole, and as a stream).
func describe(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v %d", p, info.Mode(), info.Size())
		if d.Type().IsRegular() {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			f, err := fsys.Open(p)
			if err != nil {
				return err
			}
			streamed, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return err
			}
			if !bytes.Equal(b, streamed) {
				t.Errorf("%s reads %q whole, %q as a stream", p, b, streamed)
			}
			line += fmt.Sprintf(" %q", b)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A file read after the listing must be what was listed: a file that
// changed size or type, or went away, is an error naming it; a file
// that became a link out of the folder is not followed.
func TestOpenChangedFile(t *testing.T) {
	// Outside the folder: files of the same size as the one changed.
	outDir := t.TempDir()
	outside := filepath.Join(outDir, "secret.yaml")
	writeTree(t, outDir, map[string]string{"secret.yaml": cm, "b.yaml": cm})
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, p string)
		want   error
	}{
		{"grew", func(t *testing.T, p string) { appendTo(t, p, "# more\n") }, folder.ErrChanged},
		{"shrank", func(t *testing.T, p string) { must(t, os.Truncate(p, 3)) }, folder.ErrChanged},
		{"became a directory", func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.Mkdir(p, 0o755))
		}, folder.ErrChanged},
		{"removed", func(t *testing.T, p string) { must(t, os.Remove(p)) }, fs.ErrNotExist},
		{"became a link out of the folder", func(t *testing.T, p string) {
			must(t, os.Remove(p))
			symlink(t, outside, p)
		}, nil},
		{"became a relative link out of the folder", func(t *testing.T, p string) {
			must(t, os.Remove(p))
			rel, err := filepath.Rel(filepath.Dir(p), outside)
			must(t, err)
			symlink(t, rel, p)
		}, nil},
		{"its directory became a link out of the folder", func(t *testing.T, p string) {
			must(t, os.RemoveAll(filepath.Dir(p)))
			symlink(t, outDir, filepath.Dir(p))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"a.yaml": cm, "sub/b.yaml": cm})
			tree, err := folder.Open(dir, safetree.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer tree.Close()
			tc.change(t, filepath.Join(dir, "sub", "b.yaml"))
			_, readErr := fs.ReadFile(tree, "sub/b.yaml")
			var openErr error
			if f, err := tree.Open("sub/b.yaml"); err != nil {
				openErr = err
			} else {
				_, openErr = io.ReadAll(f)
				f.Close()
			}
			for how, err := range map[string]error{"ReadFile": readErr, "Open": openErr} {
				if err == nil {
					t.Errorf("%s: read the changed file", how)
					continue
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("%s: err = %v, want %v", how, err, tc.want)
				}
				if !strings.Contains(err.Error(), filepath.Join(dir, "sub", "b.yaml")) {
					t.Errorf("%s: error %q does not name the file", how, err)
				}
			}
			if b, err := fs.ReadFile(tree, "a.yaml"); err != nil || string(b) != cm {
				t.Errorf("the unchanged a.yaml: %q, %v", b, err)
			}
		})
	}
}

// A file that grows while it is read is cut at its listed size, and the
// read fails rather than return a prefix of something else.
func TestOpenFileGrowsWhileRead(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yaml": cm})
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	f, err := tree.Open("a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 5)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(dir, "a.yaml"), strings.Repeat("x", 1000))
	rest, err := io.ReadAll(f)
	if !errors.Is(err, folder.ErrChanged) {
		t.Errorf("err = %v, want ErrChanged", err)
	}
	if got := len(head) + len(rest); got > len(cm) {
		t.Errorf("read %d bytes of a file listed with %d", got, len(cm))
	}
}

func TestOpenNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(f, []byte(cm), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := folder.Open(f, safetree.Limits{}); !errors.Is(err, folder.ErrNotDir) || !strings.Contains(err.Error(), f) {
		t.Errorf("err = %v, want ErrNotDir naming the file", err)
	}
	if _, err := folder.Open(filepath.Join(t.TempDir(), "nosuch"), safetree.Limits{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

// Open holds the folder's shape, not its bytes: listing a folder of 8 MiB
// allocates a small fraction of it.
func TestOpenHoldsNoContent(t *testing.T) {
	dir := t.TempDir()
	body := cm + "data:\n  x: " + strings.Repeat("y", 64<<10) + "\n"
	files := map[string]string{}
	for i := range 128 {
		files[filepath.Join("d"+string(rune('a'+i%8)), "f"+strings.Repeat("0", i%5)+string(rune('a'+i/8))+".yaml")] = body
	}
	writeTree(t, dir, files)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tree, err := folder.Open(dir, safetree.Limits{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	tree.Close()
	total := int64(len(files) * len(body))
	if got := int64(after.TotalAlloc - before.TotalAlloc); got > total/16 {
		t.Errorf("Open allocated %d bytes for a %d-byte folder", got, total)
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Files of many directories, read at once by several readers (render
// and the tar writer read a tree side by side), all read right.
func TestOpenManyDirsConcurrently(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		for j := range 3 {
			files[fmt.Sprintf("d%02d/f%d.yaml", i, j)] = fmt.Sprintf("%s# %d %d\n", cm, i, j)
		}
	}
	writeTree(t, dir, files)
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	var wg sync.WaitGroup
	for r := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 * len(files) {
				name := fmt.Sprintf("d%02d/f%d.yaml", (k*(r+1))%40, k%3)
				b, err := fs.ReadFile(tree, name)
				if err != nil || string(b) != files[name] {
					t.Errorf("%s: %q, %v", name, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A file reads at any offset within its listed size.
func TestOpenReadAt(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yaml": cm})
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	f, err := tree.Open("a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ra := f.(io.ReaderAt)
	got := make([]byte, 4)
	if n, err := ra.ReadAt(got, 5); n != 4 || err != nil || string(got) != cm[5:9] {
		t.Errorf("ReadAt(4 at 5) = %d %q %v", n, got, err)
	}
	appendTo(t, filepath.Join(dir, "a.yaml"), "# more\n")
	tail := make([]byte, 10)
	n, err := ra.ReadAt(tail, int64(len(cm)-3))
	if n != 3 || err != io.EOF || string(tail[:n]) != cm[len(cm)-3:] {
		t.Errorf("ReadAt past the listed size = %d %q %v, want the last 3 bytes and EOF", n, tail[:n], err)
	}
}

// A file swapped for a FIFO after the listing is refused, not waited on
// (opening a FIFO to read blocks until a writer comes).
func TestOpenFileBecameFIFO(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yaml": cm, "sub/b.yaml": cm})
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	p := filepath.Join(dir, "sub", "b.yaml")
	must(t, os.Remove(p))
	if err := mkfifo(p); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := fs.ReadFile(tree, "sub/b.yaml")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, folder.ErrChanged) || !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v, want ErrChanged naming %s", err, p)
		}
	case <-time.After(10 * time.Second):
		// Unblock the reader before failing.
		if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading a FIFO blocked")
	}
}
