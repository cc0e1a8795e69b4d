package source_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// A layout as `cosign save --dir` writes it: no ref names, each entry of
// index.json marked with cosign's kind annotation (the image, its
// signatures) is read as its one image, and verifies with the
// signatures saved beside it, as cosign verify --local-image does.
func TestOpenCosignSavedLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := partial.Descriptor(img)
	if err != nil {
		t.Fatal(err)
	}
	loc := referrers.Layout(st, "")
	if err := loc.Write(ctx, &referrers.Manifest{Descriptor: *desc, Image: img}, ""); err != nil {
		t.Fatal(err)
	}
	priv, pub, err := signature.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signature.LoadPrivateKey("cosign.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := signature.LoadPublicKey("cosign.pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Sign(ctx, loc, desc.Digest, signer, signature.SignOptions{}); err != nil {
		t.Fatal(err)
	}
	// index.json as cosign save writes it.
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	for i, m := range idx.Manifests {
		kind := mediatypes.CosignKindImage
		if strings.HasSuffix(m.Annotations[mediatypes.AnnotationRefName], ".sig") {
			kind = mediatypes.CosignKindSigs
		}
		idx.Manifests[i].Annotations = map[string]string{mediatypes.AnnotationCosignKind: kind}
	}
	if len(idx.Manifests) != 2 {
		t.Fatalf("index.json lists %d manifests, want the image and its signature", len(idx.Manifests))
	}
	if b, err = json.Marshal(idx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		ref  source.Ref
	}{
		{"unnamed", source.Ref{Kind: source.KindLayout, Path: dir}},
		{"by digest", source.Ref{Kind: source.KindLayout, Path: dir, Name: desc.Digest.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := source.Open(ctx, tc.ref, source.Options{Verify: &signature.KeyVerifier{Keys: []signature.Key{key}}})
			if err != nil {
				t.Fatalf("open %s verified: %v", tc.ref, err)
			}
			defer a.Close()
			if a.Digest != desc.Digest {
				t.Errorf("opened %s, want the saved image %s", a.Digest, desc.Digest)
			}
		})
	}
}
