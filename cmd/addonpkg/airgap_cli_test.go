package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

const (
	airgapImageA = "registry.k8s.io/x/a:1"
	airgapImageB = "b.example/y:2"
	airgapDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

// airgapLayout builds an add-on running two images into oci:DIR:1 and
// writes beside it a lock listing the given images.
func airgapLayout(t *testing.T, images ...string) string {
	t.Helper()
	tree := t.TempDir()
	cliWriteFile(t, filepath.Join(tree, "deploy.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: "+airgapImageA+"\n      - name: b\n        image: "+airgapImageB+"\n")
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", tree, "--name", "web", "--output", "oci:"+dir+":1")
	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := st.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	subject.Annotations = nil
	lock := &imagelock.Lock{MediaType: mediatypes.ImagesLock}
	for _, im := range images {
		m, err := imagelock.MirrorReference("", im, airgapDigest)
		if err != nil {
			t.Fatal(err)
		}
		lock.Images = append(lock.Images, imagelock.Image{Image: im, Digest: airgapDigest, Mirrored: m})
	}
	if _, err := imagelock.Store(context.Background(), lock, subject, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCLIRelocate(t *testing.T) {
	cliNewHome(t)
	full := airgapLayout(t, airgapImageA, airgapImageB)
	out := cliMust(t, "unpack", "--relocate", "mirror.example:5000/m", "oci:"+full+":1")
	for _, want := range []string{
		"image: mirror.example:5000/m/x/a@" + airgapDigest,
		"image: mirror.example:5000/m/y@" + airgapDigest,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("relocated stream lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "registry.k8s.io") || strings.Contains(out, "b.example") {
		t.Errorf("relocated stream names an original registry:\n%s", out)
	}

	partial := airgapLayout(t, airgapImageA)
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "-t", "crds:1")
	archive := filepath.Join(t.TempDir(), "out.tar")
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"image missing from the lock", []string{"unpack", "--relocate", "mirror.example", "oci:" + partial + ":1"}, []string{airgapImageB, "not in the image lock"}},
		{"no lock", []string{"unpack", "--relocate", "mirror.example", "crds:1"}, []string{"crds:1", "no image lock", "--with-images"}},
		{"bad mirror", []string{"unpack", "--relocate", "mirror", "oci:" + full + ":1"}, []string{"invalid mirror", `"mirror"`}},
		{"with -o", []string{"unpack", "--relocate", "mirror.example", "oci:" + full + ":1", "-o", filepath.Join(t.TempDir(), "o")}, []string{"--relocate", "-o"}},
		{"with --json", []string{"unpack", "--relocate", "mirror.example", "oci:" + full + ":1", "--json"}, []string{"--relocate", "--json"}},
		{"image mirror without images", []string{"copy", "--image-mirror", "mirror.example", "crds:1", "oci-archive:" + archive + ":1"}, []string{"--image-mirror", "--with-images"}},
		{"archive without a tag", []string{"copy", "--with-images", "crds:1", "oci-archive:" + archive}, []string{archive, ":TAG"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cliCheckError(t, cliRun(t, tc.args...), tc.wants...)
		})
	}
	if _, err := os.Stat(archive); !os.IsNotExist(err) {
		t.Errorf("a refused copy wrote %s", archive)
	}
}

// An add-on without images copies with --with-images into an archive
// (an empty lock), and relocates from there unchanged.
func TestCLICopyWithImagesNoImages(t *testing.T) {
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "-t", "crds:1")
	archive := filepath.Join(t.TempDir(), "crds.tar")
	ref := strings.TrimSpace(cliMust(t, "copy", "--with-images", "-q", "crds:1", "oci-archive:"+archive+":1"))
	if !strings.HasPrefix(ref, "oci-archive:"+archive+"@sha256:") {
		t.Errorf("copy printed %q", ref)
	}
	plain := cliMust(t, "unpack", "oci-archive:"+archive+":1")
	relocated := cliMust(t, "unpack", "--relocate", "mirror.example", "oci-archive:"+archive+":1")
	if plain != relocated {
		t.Error("relocating an add-on without images changed its stream")
	}
}
