package transfer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/pack"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// A docker-archive holds container images only: the image form is
// written (and reads back as the same add-on), the artifact form is
// refused and nothing is written.
func TestWriteDockerArchive(t *testing.T) {
	fsys, err := folder.LoadDir(filepath.Join("..", "..", "examples", "coredns"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format pack.Format
		ok     bool
	}{
		{pack.FormatImage, true},
		{pack.FormatArtifact, false},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			res, err := build.Build(context.Background(), fsys, build.Options{Name: "coredns", Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "addon.tar")
			dst, err := source.Parse("docker-archive:" + file + ":coredns:1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = transfer.Write(context.Background(), &source.Artifact{Image: res.Image, Digest: res.Digest}, dst, transfer.Options{})
			if !tc.ok {
				if !errors.Is(err, source.ErrUnsupportedDestination) || !strings.Contains(err.Error(), "artifact form") {
					t.Fatalf("Write: %v, want source.ErrUnsupportedDestination naming the artifact form", err)
				}
				if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused docker-archive was written (%v)", err)
				}
				if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 0 {
					t.Errorf("%d files left beside the refused archive", len(entries))
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			img, err := tarball.ImageFromPath(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			ad, err := unpack.Image(context.Background(), img, unpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ad.Identity != res.Config.Identity {
				t.Errorf("read back identity %s, built %s", ad.Identity, res.Config.Identity)
			}
		})
	}
}

// A copy with referrers from a docker-archive, which has no place for
// them, copies the add-on and no referrers (referrers.ErrUnsupported
// says so), rather than failing.
func TestCopyFromDockerArchiveWithReferrers(t *testing.T) {
	ctx := context.Background()
	fsys, err := folder.LoadDir(filepath.Join("..", "..", "examples", "coredns"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, fsys, build.Options{Name: "coredns", Format: pack.FormatImage})
	if err != nil {
		t.Fatal(err)
	}
	src := parse(t, "docker-archive:"+filepath.Join(t.TempDir(), "addon.tar")+":coredns:1")
	if _, err := transfer.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	dst := parse(t, "oci:"+filepath.Join(t.TempDir(), "out")+":1")
	got, err := transfer.Copy(ctx, src, dst, transfer.Options{Referrers: true, Options: source.Options{Store: newStore(t)}})
	if err != nil {
		t.Fatalf("copy with referrers from a docker-archive: %v", err)
	}
	if got.Referrers != 0 {
		t.Errorf("copied %d referrers from a docker-archive", got.Referrers)
	}
}
