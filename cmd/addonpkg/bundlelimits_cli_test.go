package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
)

// cliEmptyConfigReferrers writes n referrers of the layout's tag 1 with
// an empty config and no bundle: the listing cannot tell them from
// Sigstore bundles, so a verification reads each.
func cliEmptyConfigReferrers(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	loc := referrers.Layout(st, "")
	subject, err := loc.Resolve(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mediatypes.OCIEmpty)
		img, err := mutate.Append(base, mutate.Addendum{Layer: static.NewLayer([]byte(fmt.Sprint("not a bundle ", i)), "application/octet-stream")})
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.Subject(img, subject).(v1.Image)
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		size, err := img.Size()
		if err != nil {
			t.Fatal(err)
		}
		m := &referrers.Manifest{Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size}, Image: img}
		if err := loc.Write(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// The bounds of the search for a Sigstore bundle are flags of verify and
// of every command with --verify-key: past --max-bundle-referrers the
// check fails closed and says which flag raises it; raised, the same
// repository is read whole (here: no signature at all).
func TestCLIVerifyBundleLimits(t *testing.T) {
	cliNewHome(t)
	_, pub := cliKeys(t, "a")
	dir := filepath.Join(t.TempDir(), "layout")
	cliMust(t, "build", cliExampleDir("gateway-api-crds"), "--name", "crds", "--output", "oci:"+dir+":1")
	cliEmptyConfigReferrers(t, dir, 3)
	ref := "oci:" + dir + ":1"
	for _, args := range [][]string{
		{"verify", "--key", pub, ref},
		{"unpack", "--verify-key", pub, ref, "-o", filepath.Join(t.TempDir(), "out")},
		{"copy", "--verify-key", pub, ref, "oci-archive:" + filepath.Join(t.TempDir(), "out.tar")},
	} {
		r := cliRun(t, append(args, "--max-bundle-referrers", "2")...)
		cliCheckError(t, r, "checked 2 Sigstore bundle referrers", "left 1 unread", "(raise it with --max-bundle-referrers)")
		r = cliRun(t, append(args, "--max-bundle-referrers", "3")...)
		cliCheckError(t, r, "no signature")
		r = cliRun(t, append(args, "--max-bundle-search-bytes", "0")...)
		if r.code != 1 {
			t.Errorf("%v --max-bundle-search-bytes 0: exit %d, want a usage error", args, r.code)
		}
	}
}
