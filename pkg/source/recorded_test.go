package source_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// Resolve gives, beside the pinned SOURCE, the source an installer
// records in an inventory (unpack.Addon.Source): a local path made
// absolute, so that it names the same place read back from another
// directory, and a folder, which has no pinned form, by its absolute
// path. A relative oci:DIR@sha256:... was recorded as it was written.
func TestResolveRecordsLocalSourcesAbsolute(t *testing.T) {
	ctx := context.Background()
	regSrv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(regSrv.Close)
	regHost := strings.TrimPrefix(regSrv.URL, "http://")

	coredns := exampleDir(t, "coredns")
	fsys, err := folder.LoadDir(coredns)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, fsys, build.Options{Name: "coredns"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Digest.String()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp)
	if err := os.CopyFS("tree", os.DirFS(coredns)); err != nil {
		t.Fatal(err)
	}
	art := &source.Artifact{Image: res.Image, Digest: res.Digest}
	regRef := regHost + "/addons/coredns:1"
	for _, dst := range []string{"oci:layout:1", "oci-archive:addon.tar:1", "docker-archive:docker.tar:coredns:1", regRef} {
		ref, err := source.Parse(dst)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := transfer.Write(ctx, art, ref, transfer.Options{}); err != nil {
			t.Fatalf("write %s: %v", dst, err)
		}
	}
	abs := func(p string) string { return filepath.Join(tmp, p) }
	for _, c := range []struct{ src, pinned, recorded string }{
		{"oci:layout:1", "oci:layout@" + d, "oci:" + abs("layout") + "@" + d},
		{"oci:./layout@" + d, "oci:./layout@" + d, "oci:" + abs("layout") + "@" + d},
		{"oci-archive:addon.tar:1", "oci-archive:addon.tar@" + d, "oci-archive:" + abs("addon.tar") + "@" + d},
		{"docker-archive:docker.tar", "", "docker-archive:" + abs("docker.tar")},
		{"./tree", "", abs("tree")},
		{"tree/coredns.yaml", "", abs("tree/coredns.yaml")},
		{"file://" + abs("tree") + "/", "", abs("tree")},
		{regRef, regHost + "/addons/coredns@" + d, regHost + "/addons/coredns@" + d},
	} {
		ad := resolve(t, c.src, source.Options{})
		if ad.Pinned != c.pinned || ad.Source != c.recorded {
			t.Errorf("%s: pinned %q, recorded %q; want pinned %q, recorded %q", c.src, ad.Pinned, ad.Source, c.pinned, c.recorded)
		}
	}
}
