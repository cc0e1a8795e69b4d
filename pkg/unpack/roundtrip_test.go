package unpack_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// Every example, in both forms, unpacks to exactly its source tree.
func TestExamplesRoundTrip(t *testing.T) {
	for _, ex := range []string{"coredns", "metrics-server", "gateway-api-crds"} {
		for _, f := range []pack.Format{pack.FormatImage, pack.FormatArtifact} {
			t.Run(ex+"/"+string(f), func(t *testing.T) {
				ctx := context.Background()
				src, err := folder.LoadDir(filepath.Join("..", "..", "examples", ex))
				if err != nil {
					t.Fatal(err)
				}
				res, err := build.Build(ctx, src, build.Options{Name: ex, Format: f})
				if err != nil {
					t.Fatal(err)
				}
				a, err := unpack.Image(ctx, res.Image, unpack.Options{})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := archive.Identity(src)
				if a.Identity != want.String() || a.Config.Identity != want.String() {
					t.Errorf("identity %s, config %s, want %s", a.Identity, a.Config.Identity, want)
				}
				if a.Derived {
					t.Error("config was derived, want it read from the image")
				}
				var n int
				_ = fs.WalkDir(a.FS, ".", func(string, fs.DirEntry, error) error { n++; return nil })
				if n != src.Count()+1 {
					t.Errorf("%d entries, want %d", n, src.Count()+1)
				}
			})
		}
	}
}
