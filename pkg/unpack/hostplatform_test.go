package unpack_test

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// With no platform asked for, the index choice matches the host as Go
// names it (spec 9.1), also when the host is no Linux: on a Mac
// (darwin/arm64) an index of one linux/amd64 image reads that image, and
// an index of linux/amd64 and linux/arm64 is refused naming both, not
// read as linux/arm64 (Docker Desktop's choice) or linux/amd64 (ggcr's
// default). A platform asked for is matched as given, on any host.
func TestNoPlatformOnAHostThatIsNoLinux(t *testing.T) {
	ctx := context.Background()
	one := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: imageOf(t, imageOpts{}, ociLayer(dirE("addon/"), file("addon/arch", "amd64"))), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	for _, host := range []struct{ os, arch string }{{"darwin", "arm64"}, {"windows", "amd64"}} {
		t.Run(host.os+"/"+host.arch, func(t *testing.T) {
			defer unpack.SetHostPlatform(host.os, host.arch)()
			a, err := unpack.Index(ctx, one, unpack.Options{})
			if err != nil {
				t.Fatalf("an index of one image: %v", err)
			}
			if d := diffTrees(tree{"arch": F("amd64")}, treeOf(t, a.FS)); d != "" {
				t.Errorf("an index of one image: tree differs:\n%s", d)
			}

			_, err = unpack.Index(ctx, twoPlatformIndex(t), unpack.Options{})
			var pe *unpack.PlatformError
			if !errors.As(err, &pe) || !errors.Is(err, unpack.ErrNoPlatform) || pe.Want != host.os+"/"+host.arch || len(pe.Have) != 2 {
				t.Fatalf("an index of two Linux images: %v, want a PlatformError for %s/%s naming both", err, host.os, host.arch)
			}

			a, err = unpack.Index(ctx, twoPlatformIndex(t), unpack.Options{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}})
			if err != nil {
				t.Fatalf("--platform linux/arm64: %v", err)
			}
			if d := diffTrees(tree{"arch": F("arm64"), "only-arm": F("x")}, treeOf(t, a.FS)); d != "" {
				t.Errorf("--platform linux/arm64: tree differs:\n%s", d)
			}
		})
	}
}
