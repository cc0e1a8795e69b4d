package transfer_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// An artifact converted to the image form is, byte for byte, the image
// build makes of the same tree with the same metadata: the conversion
// packs the tree again with the artifact's inventory instead of
// rendering it (transfer compiles no kustomize), and changes nothing.
func TestConvertToImageIsTheImageBuild(t *testing.T) {
	ctx := context.Background()
	for _, ex := range []string{"coredns", "metrics-server", "gateway-api-crds"} {
		for _, noValidate := range []bool{false, true} {
			src, err := folder.LoadDir(filepath.Join("..", "..", "examples", ex))
			if err != nil {
				t.Fatal(err)
			}
			opts := build.Options{
				Name: ex, Version: "1.2.3", Description: "d", Source: "https://example.com/x.git", Revision: "abc",
				Created:     time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
				Annotations: map[string]string{"org.example/extra": "yes"},
				NoValidate:  noValidate,
			}
			opts.Format = pack.FormatArtifact
			art, err := build.Build(ctx, src, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Format = pack.FormatImage
			want, err := build.Build(ctx, src, opts)
			if err != nil {
				t.Fatal(err)
			}
			img, err := transfer.ConvertToImage(ctx, art.Image)
			if err != nil {
				t.Fatalf("%s: %v", ex, err)
			}
			if d, _ := img.Digest(); d != want.Digest {
				got, _ := img.RawConfigFile()
				exp, _ := want.Image.RawConfigFile()
				t.Errorf("%s (no validate %v): converted %s, the image build is %s\nconfig %s\nwant   %s", ex, noValidate, d, want.Digest, got, exp)
			}
		}
	}
}
