package filetree_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/filetree"
)

// dirOpener is a filetree.Opener over a directory, counting its Close
// calls.
type dirOpener struct {
	dir    string
	closed int
}

var errChanged = errors.New("changed")

func (o *dirOpener) OpenFile(name string) (filetree.File, fs.FileInfo, error) {
	f, err := os.Open(filepath.Join(o.dir, name))
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

func (o *dirOpener) Changed(name, how string) error {
	return fmt.Errorf("%s: %w: %s", name, errChanged, how)
}

func (o *dirOpener) Close() error { o.closed++; return nil }

// openerTree lists files of a new directory as files of an opener, with
// their sizes as written.
func openerTree(t *testing.T, files map[string]string) (*filetree.FS, *dirOpener) {
	t.Helper()
	o := &dirOpener{dir: t.TempDir()}
	b := filetree.NewBuilder()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(o.dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.WriteFileFrom("d/"+name, o, name, int64(len(data)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b.FS(), o
}

// A file of an opener reads as the file it names, every way a tree is
// read, without the tree holding its bytes; Close closes the opener once.
func TestWriteFileFrom(t *testing.T) {
	fsys, o := openerTree(t, map[string]string{"a.yaml": "kind: A\n", "b.yaml": "kind: B\n"})
	if err := fstest.TestFS(fsys, "d/a.yaml", "d/b.yaml"); err != nil {
		t.Error(err)
	}
	if fsys.InMemory() != 0 || fsys.Size() != 16 {
		t.Errorf("%d of %d bytes in memory, want 0 of 16", fsys.InMemory(), fsys.Size())
	}
	buf := make([]byte, 0, 64)
	got, err := filetree.ReadInto(fsys, "d/a.yaml", buf)
	if err != nil || string(got) != "kind: A\n" || &got[0] != &buf[:1][0] {
		t.Errorf("ReadInto: %q, %v, want it in the buffer", got, err)
	}
	if err := fsys.Close(); err != nil || o.closed != 1 {
		t.Errorf("Close: %v, the opener closed %d times", err, o.closed)
	}
}

// A file no longer what was listed fails with the opener's error, read
// whole or as a stream, and a read never returns more than the listed
// size.
func TestWriteFileFromChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(p string) error
		how    string
	}{
		{"grew", func(p string) error { return os.WriteFile(p, []byte("kind: A\n# more\n"), 0o644) }, "listed with 8 bytes, now 15"},
		{"shrank", func(p string) error { return os.Truncate(p, 3) }, "listed with 8 bytes, now 3"},
		{"became a directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, "listed as a file, now d---------"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, o := openerTree(t, map[string]string{"a.yaml": "kind: A\n"})
			if err := tc.change(filepath.Join(o.dir, "a.yaml")); err != nil {
				t.Fatal(err)
			}
			_, readErr := fs.ReadFile(fsys, "d/a.yaml")
			_, openErr := fsys.Open("d/a.yaml")
			for how, err := range map[string]error{"ReadFile": readErr, "Open": openErr} {
				if !errors.Is(err, errChanged) || !strings.Contains(err.Error(), tc.how) {
					t.Errorf("%s: %v, want the opener's error saying %q", how, err, tc.how)
				}
			}
		})
	}
	// Changed between the open and the end of the read: the read is cut
	// at the listed size, and fails.
	for _, tc := range []struct {
		name, how string
		change    func(p string) error
	}{
		{"grew while read", "grew while read", func(p string) error {
			w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = w.WriteString(strings.Repeat("x", 100))
			return errors.Join(err, w.Close())
		}},
		{"ended early", "ended before", func(p string) error { return os.Truncate(p, 5) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, o := openerTree(t, map[string]string{"a.yaml": "kind: A\n"})
			f, err := fsys.Open("d/a.yaml")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			head := make([]byte, 3)
			if _, err := io.ReadFull(f, head); err != nil {
				t.Fatal(err)
			}
			if err := tc.change(filepath.Join(o.dir, "a.yaml")); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(f)
			if !errors.Is(err, errChanged) || !strings.Contains(err.Error(), tc.how) {
				t.Errorf("err = %v, want the opener's error saying %q", err, tc.how)
			}
			if len(head)+len(rest) > 8 {
				t.Errorf("read %d bytes of a file listed with 8", len(head)+len(rest))
			}
		})
	}
}

// A Builder that is not built closes its openers.
func TestBuilderCloseClosesOpeners(t *testing.T) {
	o := &dirOpener{dir: t.TempDir()}
	b := filetree.NewBuilder()
	if err := b.WriteFileFrom("a", o, "a", 1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil || o.closed != 1 {
		t.Errorf("Close: %v, the opener closed %d times", err, o.closed)
	}
}
