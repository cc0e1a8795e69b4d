package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// patchPeersConfigMap is a valid manifest document a patch adds.
func patchPeersConfigMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: kube-system\ndata:\n  patched: \"true\"\n"
}

// patchPeersInspect is the part of `inspect --json` this test reads.
type patchPeersInspect struct {
	Digest string `json:"digest"`
	Form   string `json:"form"`
	Layers []struct {
		Digest string `json:"digest"`
	} `json:"layers"`
}

// build --base through the binary, for each example in both forms: the
// patched add-on keeps the base's layers and adds one; addonpkg unpack,
// umoci and crane all read the base tree with the patch applied and the
// deletes done.
func TestPatchPeers(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	umoci := lookTool(t, "umoci")
	crane := lookTool(t, "crane")
	reg := testregistry.Start(t, testregistry.Options{})

	for _, tc := range []struct {
		ex string
		// patch maps slash paths of the patch folder to their content;
		// a value of "+" means "the example's file plus a new document".
		patch   map[string]string
		deletes []string
	}{
		{
			ex: "coredns",
			patch: map[string]string{
				"coredns.yaml":           "+",
				"patch-peers-extra.yaml": patchPeersConfigMap("patch-peers-extra"),
			},
		},
		{
			ex: "metrics-server",
			patch: map[string]string{
				"patch-peers-extra.yaml": patchPeersConfigMap("patch-peers-extra"),
			},
			// Deleting components/autoscale/rbac.yaml alone is refused:
			// validation checks every kustomization of the tree, and
			// components/autoscale/kustomization.yaml names it. So the
			// whole component goes (a directory whiteout), and one
			// unreferenced overlay's kustomization (a file whiteout that
			// leaves its directory empty).
			deletes: []string{"components/autoscale", "overlays/release-ha-1.21+/kustomization.yaml"},
		},
		{
			ex: "gateway-api-crds",
			patch: map[string]string{
				"extra/patch-peers-extra.yaml": patchPeersConfigMap("patch-peers-extra"),
			},
		},
	} {
		for _, form := range []string{"image", "artifact"} {
			t.Run(tc.ex+"/"+form, func(t *testing.T) {
				tmp := t.TempDir()
				env := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store")}
				src := filepath.Join("..", "..", "examples", tc.ex)

				// The patch folder, and the tree expected after it.
				patch := filepath.Join(tmp, "patch")
				want := filepath.Join(tmp, "want")
				patchPeersCopyTree(t, src, want)
				for name, body := range tc.patch {
					if body == "+" {
						old, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
						if err != nil {
							t.Fatal(err)
						}
						body = strings.TrimRight(string(old), "\n") + "\n---\n" + patchPeersConfigMap("patch-peers-appended")
					}
					for _, root := range []string{patch, want} {
						p := filepath.Join(root, filepath.FromSlash(name))
						if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				for _, d := range tc.deletes {
					if err := os.RemoveAll(filepath.Join(want, filepath.FromSlash(d))); err != nil {
						t.Fatal(err)
					}
				}

				runTool(t, env, bin, "build", src, "-t", "base:1", "--format", form)
				layoutDir := filepath.Join(tmp, "layout")
				args := []string{"build", patch, "--base", "base:1", "-t", "patched:1", "--output", "oci:" + layoutDir + ":p"}
				for _, d := range tc.deletes {
					args = append(args, "--delete", d)
				}
				if form == "artifact" {
					// Layers kept, so that the peers read the whiteouts
					// (by default a patched artifact is one layer).
					args = append(args, "--layered")
				}
				runTool(t, env, bin, args...)

				// (a) The base's layers, as they are, then one new layer.
				var base, got patchPeersInspect
				for _, x := range []struct {
					name string
					dst  *patchPeersInspect
				}{{"base:1", &base}, {"patched:1", &got}} {
					if err := json.Unmarshal([]byte(runTool(t, env, bin, "inspect", x.name, "--json")), x.dst); err != nil {
						t.Fatalf("inspect %s: %v", x.name, err)
					}
				}
				if got.Form != form || base.Form != form {
					t.Errorf("forms: base %q, patched %q, want %q", base.Form, got.Form, form)
				}
				if len(base.Layers) == 0 || len(got.Layers) != len(base.Layers)+1 {
					t.Errorf("patched layers %v, base layers %v: want the base's plus one", got.Layers, base.Layers)
				} else {
					for i, l := range base.Layers {
						if got.Layers[i].Digest != l.Digest {
							t.Errorf("layer %d: %s, base has %s", i+1, got.Layers[i].Digest, l.Digest)
						}
					}
					for _, l := range base.Layers {
						if got.Layers[len(base.Layers)].Digest == l.Digest {
							t.Errorf("the new layer %s is one of the base's", l.Digest)
						}
					}
				}
				if d := layoutDigest(t, layoutDir); d != got.Digest {
					t.Errorf("--output wrote %s, the store holds %s", d, got.Digest)
				}

				// (b) addonpkg itself.
				out := filepath.Join(tmp, "out")
				runTool(t, env, bin, "unpack", "patched:1", "-o", out)
				if d := diffTrees(t, want, out); d != "" {
					t.Errorf("addonpkg unpack: %s", d)
				}

				if form != "image" {
					return
				}
				// (c) umoci, from the layout.
				bundle := filepath.Join(tmp, "bundle")
				runTool(t, nil, umoci, "unpack", "--rootless", "--image", layoutDir+":p", bundle)
				if d := diffTrees(t, want, filepath.Join(bundle, "rootfs", "addon")); d != "" {
					t.Errorf("umoci rootfs/addon: %s", d)
				}

				// crane, from a registry: export flattens the layers.
				ref := reg.Host + "/patch-peers/" + tc.ex + ":p"
				runTool(t, env, bin, "copy", "oci:"+layoutDir+":p", ref)
				exported := runTool(t, nil, crane, "export", "--insecure", ref, "-")
				craneDir := filepath.Join(tmp, "crane")
				patchPeersExtract(t, strings.NewReader(exported), "addon", craneDir)
				if d := diffTrees(t, want, craneDir); d != "" {
					t.Errorf("crane export addon/: %s", d)
				}
			})
		}
	}
}

// patchPeersCopyTree copies the files, directories and symlinks of src
// to dst.
func patchPeersCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// patchPeersExtract writes the entries of a flattened tar stream that lie
// under prefix/ to dir. Names are checked to stay inside dir.
func patchPeersExtract(t *testing.T, r io.Reader, prefix, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(r)
	n := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read exported tar: %v", err)
		}
		name := path.Clean(strings.TrimPrefix(strings.TrimPrefix(hdr.Name, "./"), "/"))
		rel, ok := strings.CutPrefix(name, prefix+"/")
		if !ok || rel == "" || !filepath.IsLocal(rel) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(hdr.Linkname, p)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
		default:
			t.Errorf("exported tar: %s has type %q", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("the exported tar has nothing under %s/", prefix)
	}
}
