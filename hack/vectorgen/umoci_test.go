package vectorgen_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// umociDiffers are the image-form vectors where umoci, the OCI reference
// extractor, gives another tree than the spec, and why. Every other
// accepted image-form vector in a layout must unpack with umoci to
// exactly its expected.json: an implementation that is not addonpkg
// checks the generator's models.
var umociDiffers = map[string]string{
	// umoci applies .wh.old as a whiteout, then writes the entries below
	// it into a directory .wh.old; spec 4.4 item 7 keeps nothing below a
	// .wh. segment.
	"wh-named-directory":    "entries below a .wh. name",
	"aufs-metadata-ignored": "entries below a .wh. name",
	// umoci knows no eStargz; the lazy snapshotter and containers/storage
	// hide these entries (spec 4.4).
	"estargz-metadata-ignored": "the eStargz landmark and table of contents are files of umoci's rootfs",
}

// umociRefuses are the vectors umoci does not read at all, and why.
var umociRefuses = map[string]string{
	"image-docker-schema2":      "umoci reads OCI images only",
	"image-docker-uncompressed": "umoci reads OCI images only",
	// umoci drains the decompressor after the tar, through Go's gzip, as
	// containerd's applier does; gzip -d, docker's layer store (which
	// ignores that error) and ggcr (which stops at the tar's end) read it.
	"image-gzip-zero-padding":       "umoci refuses zeros after the gzip stream (\"discard trailing archive bits: gzip: invalid header\")",
	"image-media-type-contradicted": "umoci decodes by media type, not by magic bytes (spec 9.3)",
	"image-zstd":                    "this umoci has no zstd layers",
}

// umociContentDir is where a vector's tree is in the image filesystem.
var umociContentDir = map[string]string{"content-dir-label": "manifests", "content-label-relative": "manifests", "estargz-metadata-ignored": "."}

func TestVectorsAgreeWithUmoci(t *testing.T) {
	umoci, err := exec.LookPath("umoci")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("umoci is not installed (apt-get install -y umoci)")
		}
		t.Skip("umoci is not installed (apt-get install -y umoci)")
	}
	vs, err := conformance.LoadVectors(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range vs {
		if v.Expected.Result != conformance.ResultOK || v.Expected.Form != "image" || !strings.HasPrefix(v.Source, "oci:") || isIndex(t, v.Dir) {
			continue
		}
		checked++
		t.Run(v.Name, func(t *testing.T) {
			bundle := filepath.Join(t.TempDir(), "bundle")
			cmd := exec.CommandContext(t.Context(), umoci, "unpack", "--rootless", "--image", filepath.Join(v.Dir, "layout")+":v1", bundle)
			out, err := cmd.CombinedOutput()
			if why, ok := umociRefuses[v.Name]; ok {
				if err == nil {
					t.Errorf("umoci reads it now: remove %s from umociRefuses (%s)", v.Name, why)
				}
				return
			}
			if err != nil {
				t.Fatalf("umoci unpack: %v\n%s", err, out)
			}
			dir := umociContentDir[v.Name]
			if dir == "" {
				dir = "addon"
			}
			got, err := conformance.DescribeDir(filepath.Join(bundle, "rootfs", dir), "image")
			if err != nil {
				t.Fatal(err)
			}
			d := conformance.Compare(v.Expected, got)
			why, differs := umociDiffers[v.Name]
			switch {
			case differs && len(d) == 0:
				t.Errorf("umoci agrees now: remove %s from umociDiffers (%s)", v.Name, why)
			case differs:
				t.Logf("umoci differs as known (%s): %s", why, strings.Join(d, "; "))
			case len(d) > 0:
				t.Errorf("umoci's tree differs from expected.json: %s", strings.Join(d, "; "))
			}
		})
	}
	if checked < 20 {
		t.Errorf("only %d vectors checked with umoci", checked)
	}
}

// isIndex reports whether the vector's layout tags an index.
func isIndex(t *testing.T, dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "layout", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Manifests []struct {
			MediaType string `json:"mediaType"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	return len(idx.Manifests) != 1 || strings.Contains(idx.Manifests[0].MediaType, "index")
}
