package build_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// update rewrites the golden files of this package instead of comparing
// with them:
//
//	go test ./pkg/build -run 'Golden|SpecExamples' -update
//
// rewrites pkg/build/testdata/golden-digests.json (TestGoldenDigests) and
// spec/examples/ (TestSpecExamples). Review the diff: a changed digest
// means builds of the same tree are no longer reproducible across
// addonpkg versions.
var update = flag.Bool("update", false, "rewrite testdata/golden-digests.json and spec/examples/")

// examples are the add-ons under examples/, with the version each one is
// built as.
var examples = map[string]string{
	"coredns":          "1.14.2",
	"metrics-server":   "0.9.0",
	"gateway-api-crds": "0.5.0",
}

var formats = []pack.Format{pack.FormatImage, pack.FormatArtifact}

func exampleDir(name string) string { return filepath.Join("..", "..", "examples", name) }

// fixedOptions are the build options of every golden build: nothing in
// them depends on the machine, the clock or git.
func fixedOptions(name string, f pack.Format) build.Options {
	return build.Options{
		Format:   f,
		Name:     name,
		Version:  examples[name],
		Created:  time.Unix(1700000000, 0),
		Source:   "https://example.com/addons",
		Revision: "0123456789abcdef0123456789abcdef01234567",
	}
}

// buildDir builds the folder dir read into memory (folder.LoadDir), and
// listed on disk as `addonpkg build DIR` reads it (folder.Open): both
// must give the same digest.
func buildDir(t *testing.T, dir, name string, f pack.Format) *build.Result {
	t.Helper()
	fsys, err := folder.LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir(%s): %v", dir, err)
	}
	res, err := build.Build(context.Background(), fsys, fixedOptions(name, f))
	if err != nil {
		t.Fatalf("Build(%s, %s): %v", dir, f, err)
	}
	tree, err := folder.Open(dir, safetree.Limits{})
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	defer tree.Close()
	onDisk, err := build.Build(context.Background(), tree, fixedOptions(name, f))
	if err != nil {
		t.Fatalf("Build(%s, %s) on disk: %v", dir, f, err)
	}
	if onDisk.Digest != res.Digest {
		t.Errorf("%s, %s: built from disk as %s, from memory as %s", dir, f, onDisk.Digest, res.Digest)
	}
	return res
}

const goldenFile = "testdata/golden-digests.json"

// TestGoldenDigests pins the manifest digest of every example in both
// forms. Regenerate with: go test ./pkg/build -run Golden -update
func TestGoldenDigests(t *testing.T) {
	got := map[string]string{}
	for name := range examples {
		for _, f := range formats {
			got[name+"/"+string(f)] = buildDir(t, exampleDir(name), name, f).Digest.String()
		}
	}
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", goldenFile)
		return
	}
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./pkg/build -run Golden -update)", err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", goldenFile, err)
	}
	for k, g := range got {
		if want[k] != g {
			t.Errorf("%s: digest %s, golden %s (if the change is intended: go test ./pkg/build -run Golden -update)", k, g, want[k])
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("golden file has %s, which is no longer built", k)
		}
	}
}

// copyTree copies src to dst giving every file filePerm and every
// directory dirPerm, and every entry the time mtime: the same tree as
// another checkout, another umask or another day would give.
func copyTree(t *testing.T, src, dst string, filePerm, dirPerm fs.FileMode, mtime time.Time) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, target)
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, b, filePerm); err != nil {
				return err
			}
			if err := os.Chmod(target, filePerm); err != nil { // no umask
				return err
			}
			return os.Chtimes(target, mtime, mtime)
		}
		t.Fatalf("%s: unexpected file type in an example", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Deepest first, so that a parent's time is set after its children.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], dirPerm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dirs[i], mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// Let t.TempDir's cleanup remove 0700 trees as any user.
		_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

// Times and permission bits of the source do not change the digest.
func TestReproducibleAcrossCheckouts(t *testing.T) {
	for name := range examples {
		for _, f := range formats {
			t.Run(name+"/"+string(f), func(t *testing.T) {
				a := filepath.Join(t.TempDir(), name)
				b := filepath.Join(t.TempDir(), name)
				copyTree(t, exampleDir(name), a, 0o600, 0o700, time.Unix(1000000000, 0))
				copyTree(t, exampleDir(name), b, 0o644, 0o755, time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC))
				da := buildDir(t, a, name, f).Digest
				db := buildDir(t, b, name, f).Digest
				if da != db {
					t.Errorf("copy with 0600/0700 and old times: %s; copy with 0644/0755 and new times: %s", da, db)
				}
				if orig := buildDir(t, exampleDir(name), name, f).Digest; da != orig {
					t.Errorf("copy: %s, examples/%s itself: %s", da, name, orig)
				}
			})
		}
	}
}

// Gzip headers carry no file name, no comment, no extra field and a zero
// modification time (spec/addon-v1.md section 8).
func TestGzipHeadersCarryNoNameOrTime(t *testing.T) {
	for name := range examples {
		for _, f := range formats {
			res := buildDir(t, exampleDir(name), name, f)
			layers, err := res.Image.Layers()
			if err != nil {
				t.Fatal(err)
			}
			if len(layers) != 1 {
				t.Errorf("%s/%s: %d layers, want 1", name, f, len(layers))
			}
			for i, l := range layers {
				rc, err := l.Compressed()
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
					t.Fatalf("%s/%s layer %d: not a deflate gzip stream: % x", name, f, i, b[:min(len(b), 10)])
				}
				const fextra, fname, fcomment = 0x04, 0x08, 0x10
				if flg := b[3]; flg&(fextra|fname|fcomment) != 0 {
					t.Errorf("%s/%s layer %d: gzip FLG %#02x has FEXTRA, FNAME or FCOMMENT set", name, f, i, flg)
				}
				if mtime := b[4:8]; !bytes.Equal(mtime, []byte{0, 0, 0, 0}) {
					t.Errorf("%s/%s layer %d: gzip MTIME % x, want 0", name, f, i, mtime)
				}
			}
		}
	}
}
