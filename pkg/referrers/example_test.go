package referrers_test

import (
	"context"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
)

// Copy an add-on's SBOM (an artifact whose subject is the add-on) from
// one OCI layout to another.
func ExampleCopy() {
	ctx := context.Background()
	srcDir, _ := os.MkdirTemp("", "referrers-src-*")
	dstDir, _ := os.MkdirTemp("", "referrers-dst-*")
	defer os.RemoveAll(srcDir)
	defer os.RemoveAll(dstDir)
	srcStore, _ := layout.Init(srcDir)
	dstStore, _ := layout.Init(dstDir)
	src, dst := referrers.Layout(srcStore, ""), referrers.Layout(dstStore, "")

	oci := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	addon, _ := mutate.Append(oci, mutate.Addendum{Layer: static.NewLayer([]byte("add-on"), types.OCILayer)})
	addonDesc, _ := partial.Descriptor(addon)
	sbom, _ := mutate.Append(mutate.ConfigMediaType(oci, "application/spdx+json"),
		mutate.Addendum{Layer: static.NewLayer([]byte(`{"spdxVersion":"SPDX-2.3"}`), "application/json")})
	sbom = mutate.Subject(sbom, *addonDesc).(v1.Image)
	sbomDesc, _ := partial.Descriptor(sbom)
	_ = src.Write(ctx, &referrers.Manifest{Descriptor: *addonDesc, Image: addon}, "1")
	_ = src.Write(ctx, &referrers.Manifest{Descriptor: *sbomDesc, Image: sbom}, "")
	_ = dst.Write(ctx, &referrers.Manifest{Descriptor: *addonDesc, Image: addon}, "1")

	copied, err := referrers.Copy(ctx, src, dst, []v1.Hash{addonDesc.Digest}, referrers.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range copied {
		fmt.Println(c.ArtifactType, c.Digest == sbomDesc.Digest.String())
	}
	// Output: application/spdx+json true
}
