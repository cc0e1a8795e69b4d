package source_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ggcrlayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// docker buildx build --output type=oci (and skopeo copy --all, and
// docker save since Docker 25) writes a layout whose index.json names
// only the multi-platform index; the image of each platform, and the
// attestation manifest BuildKit puts beside it, are below it. A registry
// serves each of those manifests by its digest, and so does a layout
// now: oci:DIR@DIGEST of a platform's image was "not found in store".
func TestLayoutManifestBelowAnIndex(t *testing.T) {
	ctx := context.Background()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{Layer: gzipLayer(t, map[string]string{"addon/cm.yaml": configMapYAML}, types.OCILayer), MediaType: types.OCILayer})
	if err != nil {
		t.Fatal(err)
	}
	imgDigest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// BuildKit's attestation manifest: in-toto statements as layers.
	att := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	att = mutate.ConfigMediaType(att, types.OCIConfigJSON)
	att, err = mutate.Append(att, mutate.Addendum{
		Layer:       static.NewLayer([]byte(`{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://slsa.dev/provenance/v0.2"}`), "application/vnd.in-toto+json"),
		MediaType:   "application/vnd.in-toto+json",
		Annotations: map[string]string{"in-toto.io/predicate-type": "https://slsa.dev/provenance/v0.2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	attDigest, err := att.Digest()
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.digest": imgDigest.String(), "vnd.docker.reference.type": "attestation-manifest"}}},
	)
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := ggcrlayout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(idx, ggcrlayout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": "latest", "io.containerd.image.name": "docker.io/library/addon:latest",
	})); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "addon.tar")
	tarDir(t, dir, archive)

	for _, s := range []string{"oci:" + dir + "@" + imgDigest.String(), "oci-archive:" + archive + "@" + imgDigest.String()} {
		ad := resolve(t, s, source.Options{})
		if ad.Digest != imgDigest || ad.Pinned != s {
			t.Errorf("%s: digest %s, pinned %s; want the platform's image, pinned as named", s, ad.Digest, ad.Pinned)
		}
		if b, err := ad.FS.ReadFile("cm.yaml"); err != nil || string(b) != configMapYAML {
			t.Errorf("%s: cm.yaml %q, %v", s, b, err)
		}
	}

	// The attestation is found, and refused for what it is; a digest the
	// layout does not hold is still not found.
	attRef := "oci:" + dir + "@" + attDigest.String()
	_, err = source.Resolve(ctx, attRef, source.Options{}, unpack.Options{})
	if !errors.Is(err, unpack.ErrUnsupported) {
		t.Errorf("the attestation manifest by digest: %v, want unpack.ErrUnsupported", err)
	} else {
		checkOneLine(t, err, attRef, "not an add-on but an attestation")
	}
	missing := "oci:" + dir + "@sha256:" + strings.Repeat("0", 64)
	if _, err := source.Resolve(ctx, missing, source.Options{}, unpack.Options{}); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("%s: %v, want errdef.ErrNotFound", missing, err)
	}
}
