package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Independent tools accept what build writes: umoci unpacks the image
// form to exactly the source tree, and skopeo copies both forms between
// layouts without changing their digests.
func TestPeersReadBuildOutput(t *testing.T) {
	t.Parallel()
	umoci := lookTool(t, "umoci")
	skopeo := lookTool(t, "skopeo")
	bin := binary(t)
	for _, ex := range []string{"coredns", "metrics-server", "gateway-api-crds"} {
		t.Run(ex, func(t *testing.T) {
			tmp := t.TempDir()
			env := []string{"ADDONPKG_HOME=" + filepath.Join(tmp, "store")}
			src := filepath.Join("..", "..", "examples", ex)
			for _, form := range []string{"image", "artifact"} {
				layoutDir := filepath.Join(tmp, form)
				digest := strings.TrimSpace(runTool(t, env, bin, "build", src, "--format", form, "--output", "oci:"+layoutDir+":v1"))

				if form == "image" {
					bundle := filepath.Join(tmp, "bundle")
					runTool(t, nil, umoci, "unpack", "--rootless", "--image", layoutDir+":v1", bundle)
					if d := diffTrees(t, src, filepath.Join(bundle, "rootfs", "addon")); d != "" {
						t.Errorf("umoci's rootfs/addon differs from %s: %s", src, d)
					}
				}

				copied := filepath.Join(tmp, form+"-copy")
				runTool(t, nil, skopeo, "copy", "--quiet", "oci:"+layoutDir+":v1", "oci:"+copied+":v1")
				if got := layoutDigest(t, copied); got != digest {
					t.Errorf("%s: skopeo copy changed the digest: %s, built %s", form, got, digest)
				}
			}
		})
	}
}

func layoutDigest(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(b, &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("index.json of %s: %v %s", dir, err, b)
	}
	return idx.Manifests[0].Digest
}

// diffTrees compares two directory trees (paths, types, contents, link
// targets) and describes the first difference.
func diffTrees(t *testing.T, a, b string) string {
	t.Helper()
	ta, tb := readTree(t, a), readTree(t, b)
	for p, v := range ta {
		if w, ok := tb[p]; !ok {
			return p + " missing"
		} else if v != w {
			return p + " differs"
		}
	}
	for p := range tb {
		if _, ok := ta[p]; !ok {
			return p + " extra"
		}
	}
	return ""
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".":
		case d.IsDir():
			m[rel] = "dir"
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = "file:" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
