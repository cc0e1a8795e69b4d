package render_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A tree read through its links (os.DirFS) must not read the
// installer's files through a link that leaves it: kustomize's
// generators and resources, and the plain splitter, read what the link
// names. The render refuses such a tree with safetree.ErrLinkEscape; a
// link that stays inside renders.
func TestRenderRefusesLinksOutOfTheTree(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: host-secret\nstringData:\n  token: s3cr3t\n"), 0o644))
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
	}{
		{"generator file", map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: x\n  files:\n  - token\n"}, map[string]string{"token": secret}},
		{"kustomize resource", map[string]string{"kustomization.yaml": "resources:\n- s.yaml\n"}, map[string]string{"s.yaml": secret}},
		{"plain manifest", map[string]string{"cm.yaml": configMap}, map[string]string{"s.yaml": secret}},
		{"directory", map[string]string{"kustomization.yaml": "resources:\n- host\n"}, map[string]string{"host": filepath.Dir(secret)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, s := range tc.files {
				must(os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644))
			}
			for n, target := range tc.links {
				must(os.Symlink(target, filepath.Join(dir, n)))
			}
			res, err := render.Render(context.Background(), os.DirFS(dir), render.Options{})
			if !errors.Is(err, safetree.ErrLinkEscape) {
				t.Errorf("err = %v, want ErrLinkEscape", err)
			}
			if res != nil && strings.Contains(string(res.YAML()), "s3cr3t") {
				t.Errorf("the stream holds the host's file:\n%s", res.YAML())
			}
		})
	}
	dir := t.TempDir()
	must(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- link.yaml\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(configMap), 0o644))
	must(os.Symlink("cm.yaml", filepath.Join(dir, "link.yaml")))
	if _, err := render.Render(context.Background(), os.DirFS(dir), render.Options{}); err != nil {
		t.Errorf("a link inside the tree: %v", err)
	}
}

// Other shapes of a hostile kustomization that must end in an error,
// quickly, without reading outside the tree: a generator naming a host
// file by absolute path (kustomize reads it inside the tree, where it is
// not), components, crds and configurations up the tree, a kustomization
// that includes itself or its parent, and YAML nested beyond go-yaml's
// depth limit.
func TestKustomizeHostileShapesRefused(t *testing.T) {
	host, err := os.ReadFile("/etc/hostname")
	if err != nil || len(strings.TrimSpace(string(host))) < 6 {
		host = []byte("root:x:0:0") // /etc/passwd's first line
	}
	hostText := strings.TrimSpace(string(host))
	for _, tc := range []struct {
		name    string
		files   map[string]string
		outside bool // the error is ErrOutsideRoot
	}{
		{"generator file by absolute path", map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: x\n  files:\n  - /etc/hostname\n  - /etc/passwd\n"}, false},
		{"generator env by absolute path", map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: x\n  envs:\n  - /etc/passwd\n"}, false},
		{"generator file up the tree", map[string]string{"kustomization.yaml": "resources:\n- sub\n", "sub/kustomization.yaml": "configMapGenerator:\n- name: x\n  files:\n  - ../secret.txt\n", "secret.txt": "s"}, false},
		{"components up the tree", map[string]string{"kustomization.yaml": "resources:\n- sub\n", "sub/kustomization.yaml": "components:\n- ../../c\n"}, true},
		{"crds up the tree", map[string]string{"kustomization.yaml": "crds:\n- ../crd.yaml\n"}, true},
		{"configurations by absolute path", map[string]string{"kustomization.yaml": "configurations:\n- /etc/passwd\n"}, true},
		{"itself", map[string]string{"kustomization.yaml": "resources:\n- .\n"}, false},
		{"a cycle", map[string]string{"kustomization.yaml": "resources:\n- a\n", "a/kustomization.yaml": "resources:\n- ../b\n", "b/kustomization.yaml": "resources:\n- ../a\n"}, false},
		{"YAML nested 100,000 deep", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n", "cm.yaml": configMap + "data:\n  x: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, err := renderTree(t, tc.files)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if err == nil {
				t.Fatalf("rendered:\n%s", res.YAML())
			}
			if tc.outside && !errors.Is(err, render.ErrOutsideRoot) {
				t.Errorf("err = %v, want ErrOutsideRoot", err)
			}
			if strings.Contains(err.Error(), hostText) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q holds a host file's text or more than one line", err)
			}
		})
	}
}

// A link to a folder that holds it (base/loop -> ..) stays in the tree,
// but kustomize and the walk of its kustomizations went round it until
// the path was too long, and failed naming base/loop/base/loop/... (40
// times) "not found". Such a tree is refused before either reads it, in
// one line naming the link, whether a kustomization names the link or
// not, and so is a plain-manifest tree. An unpacked add-on (a filetree)
// keeps such a link, as spec 9.4 allows; its render refuses it too.
func TestRenderRefusesLinkLoops(t *testing.T) {
	// A plain tree's walk does not follow links through folders, and the
	// format allows a link to a folder that holds it (spec 9.4, vector
	// symlink-chain-inside): it renders, each manifest once.
	t.Run("in a plain tree", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "base"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "base", "cm.yaml"), []byte(configMap), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("..", filepath.Join(dir, "base", "loop")); err != nil {
			t.Fatal(err)
		}
		for _, raw := range []bool{false, true} {
			r, err := render.Render(context.Background(), os.DirFS(dir), render.Options{Raw: raw})
			if err != nil {
				t.Fatalf("raw %v: %v", raw, err)
			}
			if len(r.Documents) != 1 {
				t.Errorf("raw %v: %d documents, want 1", raw, len(r.Documents))
			}
		}
	})
	t.Run("unpacked", func(t *testing.T) {
		b := filetree.NewBuilder()
		for n, s := range map[string]string{"kustomization.yaml": "resources:\n- base\n", "base/kustomization.yaml": "resources:\n- cm.yaml\n- loop\n", "base/cm.yaml": configMap} {
			if err := b.WriteFile(n, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Symlink("..", "base/loop"); err != nil {
			t.Fatal(err)
		}
		fsys := b.FS()
		if err := safetree.CheckLinks(fsys); err != nil {
			t.Fatalf("CheckLinks (unpack's) refused it: %v", err)
		}
		_, err := render.Render(context.Background(), fsys, render.Options{})
		var se *safetree.Error
		if !errors.Is(err, safetree.ErrLinkLoop) || !errors.As(err, &se) || se.Entry != "base/loop" {
			t.Fatalf("err = %v, want ErrLinkLoop naming base/loop", err)
		}
	})
	for _, tc := range []struct {
		name, target string
		files        map[string]string
	}{
		{"named by a kustomization", "..", map[string]string{"kustomization.yaml": "resources:\n- base\n", "base/kustomization.yaml": "resources:\n- cm.yaml\n- loop\n", "base/cm.yaml": configMap}},
		{"in a kustomize tree", "..", map[string]string{"kustomization.yaml": "resources:\n- base\n", "base/kustomization.yaml": "resources:\n- cm.yaml\n", "base/cm.yaml": configMap}},
		{"to its own folder", ".", map[string]string{"kustomization.yaml": "resources:\n- base\n", "base/kustomization.yaml": "resources:\n- cm.yaml\n- loop\n", "base/cm.yaml": configMap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, s := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(n))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Join(dir, "base"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target, filepath.Join(dir, "base", "loop")); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := render.Render(context.Background(), os.DirFS(dir), render.Options{})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			var se *safetree.Error
			if !errors.Is(err, safetree.ErrLinkLoop) || !errors.As(err, &se) || se.Entry != "base/loop" {
				t.Fatalf("err = %v, want ErrLinkLoop naming base/loop", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 200 {
				t.Errorf("message of %d bytes, want one short line: %q", len(msg), msg)
			}
		})
	}
}
