package folder_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Package a one-file add-on in the artifact form.
func TestLoadDirIgnore(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"a.yaml":           cm,
			"notes.txt":        "ignored by a pattern",
			"keep.txt":         "re-included by a negation",
			"sub/b.yaml":       cm,
			"sub/scratch.txt":  "ignored",
			"build/out.yaml":   cm,
			".git/config":      "[core]\n",
			".git/HEAD":        "ref: refs/heads/main\n",
			"sub/.git/HEAD":    "nested repository",
			"a.yaml~":          "editor backup",
			".addonignore":     "# comment\n*.txt\n!keep.txt\nbuild/\n",
			"sub/deep/c.yml":   cm,
			"sub/deep/.swp.ok": "a name that only looks like a swap file",
		})
		fsys, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := entries(t, fsys)
		for _, want := range []string{"a.yaml", "keep.txt", "sub/", "sub/b.yaml", "sub/deep/", "sub/deep/c.yml", "sub/deep/.swp.ok"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s missing from the tree %q", want, got)
			}
		}
		for _, gone := range []string{"notes.txt", "sub/scratch.txt", "build/", "build/out.yaml", ".git/", ".git/config", "sub/.git/", "sub/.git/HEAD", "a.yaml~"} {
			if slices.Contains(got, gone) {
				t.Errorf("%s should be ignored; tree %q", gone, got)
			}
		}
	})
}

// spec/addon-v1.md section 8: the .addonignore file "is build input, not
// content: it is left out unless a rule re-includes it".
func TestLoadDirAddonignoreItself(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.yaml": cm, ".addonignore": "*.txt\n"})
		fsys, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := entries(t, fsys); !slices.Equal(got, []string{"a.yaml"}) {
			t.Errorf("tree %q, want only a.yaml", got)
		}
		writeTree(t, dir, map[string]string{".addonignore": "*.txt\n!.addonignore\n"})
		fsys, err = load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := entries(t, fsys); !slices.Equal(got, []string{".addonignore", "a.yaml"}) {
			t.Errorf("with !.addonignore: tree %q, want .addonignore and a.yaml", got)
		}
	})
}

func TestLoadDirSymlinkToFile(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"real.yaml": cm, "sub/x.yaml": cm})
		symlink(t, "real.yaml", filepath.Join(dir, "link.yaml"))
		symlink(t, "../real.yaml", filepath.Join(dir, "sub", "up.yaml"))
		fsys, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"link.yaml", "sub/up.yaml"} {
			info, err := fs.Lstat(fsys, name)
			if err != nil {
				t.Fatalf("%s: %v (tree %q)", name, err, entries(t, fsys))
			}
			if !info.Mode().IsRegular() {
				t.Errorf("%s has mode %v, want a regular file", name, info.Mode())
			}
			b, _ := fs.ReadFile(fsys, name)
			if string(b) != cm {
				t.Errorf("%s holds %q, want the target's content", name, b)
			}
		}
	})
}

func TestLoadDirSymlinkToDir(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"real/x.yaml": cm, "real/nested/y.yaml": cm})
		symlink(t, "real", filepath.Join(dir, "alias"))
		fsys, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := entries(t, fsys)
		want := []string{"alias/", "alias/nested/", "alias/nested/y.yaml", "alias/x.yaml", "real/", "real/nested/", "real/nested/y.yaml", "real/x.yaml"}
		if !slices.Equal(got, want) {
			t.Errorf("tree %q, want %q", got, want)
		}
	})
}

// Many links to directories side by side are not nested links: they must
// not count against the depth bound for cycles.
func TestLoadDirManySiblingDirLinks(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"data/x.yaml": cm})
		const n = 40
		for i := range n {
			symlink(t, "data", filepath.Join(dir, fmt.Sprintf("v%02d", i)))
		}
		fsys, err := load(dir)
		if err != nil {
			t.Fatalf("%d sibling links to one directory: %v", n, err)
		}
		for i := range n {
			if _, err := fs.Stat(fsys, fmt.Sprintf("v%02d/x.yaml", i)); err != nil {
				t.Error(err)
			}
		}
	})
}

func TestLoadDirSymlinkOutside(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		parent := t.TempDir()
		writeTree(t, parent, map[string]string{"outside.yaml": cm, "tree/a.yaml": cm, "tree/sub/b.yaml": cm})
		for _, tc := range []struct{ name, link, target string }{
			{"absolute", "passwd.yaml", "/etc/passwd"},
			{"absolute inside the tree", "self.yaml", filepath.Join(parent, "tree", "a.yaml")},
			{"relative", "out.yaml", "../outside.yaml"},
			{"relative from a subdirectory", "sub/out.yaml", "../../outside.yaml"},
			{"directory", "parentdir", ".."},
			{"absolute directory", "etc", "/etc"},
			{"out and back in", "back.yaml", "../tree/a.yaml"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "tree")
				writeTree(t, dir, map[string]string{"a.yaml": cm, "sub/b.yaml": cm})
				symlink(t, tc.target, filepath.Join(dir, filepath.FromSlash(tc.link)))
				_, err := load(dir)
				if !errors.Is(err, folder.ErrSymlinkOutside) {
					t.Fatalf("link %s -> %s: err = %v, want ErrSymlinkOutside", tc.link, tc.target, err)
				}
				if !strings.Contains(err.Error(), filepath.Base(tc.link)) {
					t.Errorf("error %q does not name the link", err)
				}
			})
		}
	})
}

func TestLoadDirBadSymlinks(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		for _, tc := range []struct {
			name  string
			links map[string]string
		}{
			{"dangling", map[string]string{"gone.yaml": "nosuch.yaml"}},
			{"file cycle", map[string]string{"a.yaml": "b.yaml", "b.yaml": "a.yaml"}},
			{"self", map[string]string{"self.yaml": "self.yaml"}},
			{"directory cycle", map[string]string{"loop": "."}},
			{"two directory cycles", map[string]string{"l1": ".", "l2": "."}},
			{"cycle through a parent", map[string]string{"sub/up": ".."}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				writeTree(t, dir, map[string]string{"x.yaml": cm, "sub/y.yaml": cm})
				for link, target := range tc.links {
					symlink(t, target, filepath.Join(dir, filepath.FromSlash(link)))
				}
				start := time.Now()
				_, err := load(dir)
				if err == nil {
					t.Fatal("LoadDir accepted the tree")
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("took %v to refuse", d)
				}
			})
		}
	})
}

// A link the ignore rules leave out is not judged: Emacs' lock file (a
// link that leads nowhere, left out by the default rule .#*) and a link out
// of the folder that .addonignore names. Both failed the build before. A
// link that a pattern for directories names is judged by what it points to.
func TestLoadDirIgnoredLinksNotJudged(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.yaml": cm, "sub/b.yaml": cm, ".addonignore": "result\nbuild/\n"})
		symlink(t, "user@host.1234:1700000000", filepath.Join(dir, ".#a.yaml"))
		symlink(t, "/nix/store/abc-result", filepath.Join(dir, "result"))
		symlink(t, "sub", filepath.Join(dir, "build"))
		fsys, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		if err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
			names = append(names, name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if want := []string{".", "a.yaml", "sub", "sub/b.yaml"}; !slices.Equal(names, want) {
			t.Errorf("tree %q, want %q", names, want)
		}

		// "build/" names directories: a link to a file is kept, one that
		// leads nowhere is still refused.
		os.Remove(filepath.Join(dir, "build"))
		symlink(t, "a.yaml", filepath.Join(dir, "build"))
		if fsys, err = load(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Stat(fsys, "build"); err != nil {
			t.Errorf("a link to a file that a directory pattern names: %v", err)
		}
		os.Remove(filepath.Join(dir, "build"))
		symlink(t, "nowhere", filepath.Join(dir, "build"))
		if _, err := load(dir); err == nil || !strings.Contains(err.Error(), "build") {
			t.Errorf("err = %v, want the dangling link refused", err)
		}
	})
}

func TestLoadDirEmpty(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		t.Run("empty directory", func(t *testing.T) {
			if _, err := load(t.TempDir()); !errors.Is(err, folder.ErrEmpty) {
				t.Errorf("err = %v, want ErrEmpty", err)
			}
		})
		t.Run("only directories", func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"a/": "", "a/b/": ""})
			if _, err := load(dir); !errors.Is(err, folder.ErrEmpty) {
				t.Errorf("err = %v, want ErrEmpty", err)
			}
		})
		t.Run("everything ignored", func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{".git/HEAD": "x", "x.yaml": cm, ".addonignore": "*.yaml\n"})
			if _, err := load(dir); !errors.Is(err, folder.ErrEmpty) {
				t.Errorf("err = %v, want ErrEmpty", err)
			}
		})
	})
	t.Run("empty file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "x.yaml")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := folder.LoadDir(f); !errors.Is(err, folder.ErrEmpty) {
			t.Errorf("err = %v, want ErrEmpty", err)
		}
	})
}

func TestLoadDirMissing(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		p := filepath.Join(t.TempDir(), "nosuch")
		_, err := load(p)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nosuch") {
			t.Errorf("err = %v, want a not-exist error naming the path", err)
		}
	})
}

func TestLoadDirRefusesSpecialFiles(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.yaml": cm})
		if err := mkfifo(filepath.Join(dir, "fifo")); err != nil {
			t.Skip("mkfifo:", err)
		}
		_, err := load(dir)
		if !errors.Is(err, safetree.ErrUnsupportedType) || !strings.Contains(err.Error(), filepath.Join(dir, "fifo")+" is a named pipe") {
			t.Errorf("err = %v, want safetree.ErrUnsupportedType naming the FIFO", err)
		}
		os.Remove(filepath.Join(dir, "fifo"))
		l, err := net.Listen("unix", filepath.Join(dir, "sock"))
		if err != nil {
			t.Skip("unix socket:", err)
		}
		defer l.Close()
		_, err = load(dir)
		if !errors.Is(err, safetree.ErrUnsupportedType) || !strings.Contains(err.Error(), filepath.Join(dir, "sock")+" is a socket") {
			t.Errorf("err = %v, want safetree.ErrUnsupportedType naming the socket", err)
		}
	})
}

func TestLoadDirRefusesReservedNames(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		for _, name := range []string{".wh.x.yaml", "sub/.wh..wh..opq", "\xff.yaml"} {
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				writeTree(t, dir, map[string]string{"a.yaml": cm, name: cm})
				if _, err := load(dir); err == nil {
					t.Errorf("%q accepted", name)
				}
			})
		}
	})
}

// loadFunc reads a folder as a tree: folder.LoadDir, or folder.Open.
type loadFunc func(dir string) (fs.FS, error)

// eachLoader runs test for both ways of reading a folder, which must
// apply the same rules: LoadDir into memory, Open on disk.
func eachLoader(t *testing.T, test func(t *testing.T, load loadFunc)) {
	t.Helper()
	t.Run("LoadDir", func(t *testing.T) {
		test(t, func(dir string) (fs.FS, error) {
			fsys, err := folder.LoadDir(dir)
			if err != nil {
				return nil, err
			}
			return fsys, nil
		})
	})
	t.Run("Open", func(t *testing.T) {
		test(t, func(dir string) (fs.FS, error) {
			tree, err := folder.Open(dir, safetree.Limits{})
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { tree.Close() })
			return tree, nil
		})
	})
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

// entries lists the tree as "path" for files, "path/" for directories and
// "path -> target" for symlinks.
func entries(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		switch {
		case d.IsDir():
			out = append(out, p+"/")
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := fs.ReadLink(fsys, p)
			out = append(out, p+" -> "+target)
		default:
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A link to a folder that holds it (base/loop -> ..) stays inside the
// folder, but loading copied the folder into itself 32 times over and
// failed on a path hundreds of bytes long ("too many levels of directory
// symlinks", untyped). It is refused at once, naming the link, as every
// tree refuses it (safetree.ErrLinkLoop).
func TestLoadDirSymlinkLoop(t *testing.T) {
	eachLoader(t, func(t *testing.T, load loadFunc) {
		for _, tc := range []struct{ link, target string }{
			{"base/loop", ".."},
			{"base/self", "."},
			{"base/deep/up", "../.."},
		} {
			t.Run(tc.link, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "tree")
				writeTree(t, dir, map[string]string{"a.yaml": cm, "base/b.yaml": cm, "base/deep/c.yaml": cm})
				symlink(t, tc.target, filepath.Join(dir, filepath.FromSlash(tc.link)))
				_, err := load(dir)
				if !errors.Is(err, safetree.ErrLinkLoop) || errors.Is(err, folder.ErrSymlinkOutside) {
					t.Fatalf("link %s -> %s: err = %v, want ErrLinkLoop", tc.link, tc.target, err)
				}
				if msg := err.Error(); len(msg) > len(dir)+250 || !strings.Contains(msg, tc.link) {
					t.Errorf("message %q: want one short line naming the link", msg)
				}
			})
		}
	})
}
