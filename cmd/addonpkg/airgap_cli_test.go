package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

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
	t.Parallel()
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
		usage bool // a flag combination: a usage error
	}{
		{"image missing from the lock", []string{"unpack", "--relocate", "mirror.example", "oci:" + partial + ":1"}, []string{airgapImageB, "not in the image lock"}, false},
		{"no lock", []string{"unpack", "--relocate", "mirror.example", "crds:1"}, []string{"crds:1", "no image lock", "--with-images"}, false},
		{"bad mirror", []string{"unpack", "--relocate", "mirror", "oci:" + full + ":1"}, []string{"invalid mirror", `"mirror"`}, false},
		{"with -o", []string{"unpack", "--relocate", "mirror.example", "oci:" + full + ":1", "-o", filepath.Join(t.TempDir(), "o")}, []string{"--relocate", "-o"}, true},
		{"with --json", []string{"unpack", "--relocate", "mirror.example", "oci:" + full + ":1", "--json"}, []string{"--relocate", "--json"}, true},
		{"image mirror without images", []string{"copy", "--image-mirror", "mirror.example", "crds:1", "oci-archive:" + archive + ":1"}, []string{"--image-mirror", "--with-images"}, true},
		{"archive without a tag", []string{"copy", "--with-images", "crds:1", "oci-archive:" + archive}, []string{archive, ":TAG"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.usage {
				cliCheckUsageError(t, cliRun(t, tc.args...), tc.wants...)
				return
			}
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
	t.Parallel()
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

// tamperedLockArtifact is a lock artifact holding doc as it is, without
// the validation imagelock.Artifact does: what an attacker who can push a
// referrer to a mirror writes.
func tamperedLockArtifact(t *testing.T, doc []byte, subject v1.Descriptor) v1.Image {
	t.Helper()
	empty := []byte("{}")
	digest := func(b []byte) v1.Hash {
		h, _, err := v1.SHA256(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sub := v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(mediatypes.ImagesLock),
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Size: 2, Digest: digest(empty)},
		Layers:        []v1.Descriptor{{MediaType: mediatypes.ImagesLock, Size: int64(len(doc)), Digest: digest(doc)}},
		Subject:       &sub,
	}
	raw, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := partial.CompressedToImage(rawArtifact{manifest: raw, blobs: map[v1.Hash][]byte{digest(doc): doc, digest(empty): empty}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

type rawArtifact struct {
	manifest []byte
	blobs    map[v1.Hash][]byte
}

func (a rawArtifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a rawArtifact) RawManifest() ([]byte, error)        { return a.manifest, nil }
func (a rawArtifact) RawConfigFile() ([]byte, error)      { return []byte("{}"), nil }
func (a rawArtifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	b, ok := a.blobs[h]
	if !ok {
		return nil, fmt.Errorf("no blob %s", h)
	}
	return static.NewLayer(b, mediatypes.ImagesLock), nil
}

// The critical air-gap bypass of issue 25: a signed add-on pins an image
// by digest; only its (unsigned) image lock is changed to map that
// reference to another digest. Relocation and copy must refuse the lock,
// not follow it.
func TestCLISignedPinCannotBeRedirected(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	const good = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const evil = "sha256:6666666666666666666666666666666666666666666666666666666666666666"
	pinned := "registry.example/lib/app@" + good
	tree := t.TempDir()
	cliWriteFile(t, filepath.Join(tree, "deploy.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: "+pinned+"\n")
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", tree, "--name", "app", "--output", "oci:"+dir+":1")

	key, pub := cliKeys(t, "a")
	cliMust(t, "sign", "--key", key, "oci:"+dir+":1")
	cliMust(t, "verify", "--key", pub, "oci:"+dir+":1")

	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := st.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	subject.Annotations = nil
	// What the attacker writes: the pinned reference locked as EVIL, with
	// the mirrored name that follows from it, so every other rule holds.
	doc := fmt.Sprintf(`{"mediaType":%q,"subject":%q,"mirror":"","images":[{"image":%q,"digest":%q,"mirrored":"lib/app@%s"}]}`,
		mediatypes.ImagesLock, subject.Digest, pinned, evil, evil)
	if _, err := st.WriteImage(context.Background(), tamperedLockArtifact(t, []byte(doc), subject), nil); err != nil {
		t.Fatal(err)
	}

	verify := []string{"--verify-key", pub}
	for _, args := range [][]string{
		append([]string{"unpack", "--relocate", "mirror.example:5000", "oci:" + dir + ":1"}, verify...),
		append([]string{"copy", "--with-images", "oci:" + dir + ":1", "oci-archive:" + filepath.Join(t.TempDir(), "out.tar") + ":1"}, verify...),
	} {
		t.Run(args[0], func(t *testing.T) {
			r := cliRun(t, args...)
			cliCheckError(t, r, "pinned digest", pinned, evil)
			if strings.Contains(r.stdout, evil) {
				t.Errorf("%s printed the redirected digest:\n%s", args[0], r.stdout)
			}
		})
	}
}
