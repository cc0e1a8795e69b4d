package transfer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// Copy moves an add-on byte for byte between any two places SOURCE
// strings name (registries, the store, oci:DIR, oci-archive:FILE): here
// from an OCI layout to an archive for an air gap, the digest kept.
func ExampleCopy() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "transfer-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	b := filetree.NewBuilder()
	if err := b.WriteFile("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"), 0o644); err != nil {
		panic(err)
	}
	built, err := build.Build(ctx, b.FS(), build.Options{Name: "settings"})
	if err != nil {
		panic(err)
	}
	from, err := source.Parse("oci:" + filepath.Join(dir, "layout") + ":1.0")
	if err != nil {
		panic(err)
	}
	if _, err := transfer.Write(ctx, &source.Artifact{Image: built.Image, Digest: built.Digest}, from, transfer.Options{}); err != nil {
		panic(err)
	}

	to, err := source.Parse("oci-archive:" + filepath.Join(dir, "settings.tar") + ":1.0")
	if err != nil {
		panic(err)
	}
	res, err := transfer.Copy(ctx, from, to, transfer.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Digest == built.Digest.String(), res.MediaType)
	// Output: true application/vnd.oci.image.manifest.v1+json
}
