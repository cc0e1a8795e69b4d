package transfer_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// Options.Referrers carries an SBOM (a subject referrer) and a cosign
// .sig tag through a copy into an oci-archive and out of it into another
// registry; without it, neither travels.
func TestCopyReferrers(t *testing.T) {
	ctx := context.Background()
	art := testAddon(t, "a")
	srcHost := testRegistry(t, "")
	src := parse(t, srcHost+"/addons/a:1")
	if _, err := transfer.Write(ctx, art, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(srcHost + "/addons/a")
	if err != nil {
		t.Fatal(err)
	}
	pushSBOM(t, repo, art.Image)
	sig := cosignSignature(t, art.Digest)
	sigTag := referrers.CosignTag(art.Digest, ".sig")
	if err := remote.Write(repo.Tag(sigTag), sig); err != nil {
		t.Fatal(err)
	}

	for _, on := range []bool{true, false} {
		archive := parse(t, "oci-archive:"+filepath.Join(t.TempDir(), "a.tar")+":1")
		dst := parse(t, testRegistry(t, "")+"/mirror/a:1")
		want := 0
		if on {
			want = 2
		}
		opts := transfer.Options{Referrers: on, Options: source.Options{Store: newStore(t)}}
		for _, hop := range [][2]source.Ref{{src, archive}, {archive, dst}} {
			res, err := transfer.Copy(ctx, hop[0], hop[1], opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Referrers != want {
				t.Errorf("Referrers=%v: %s to %s copied %d referrers, want %d", on, hop[0], hop[1], res.Referrers, want)
			}
		}
		dstRepo, err := name.NewRepository(dst.Name[:len(dst.Name)-2])
		if err != nil {
			t.Fatal(err)
		}
		found, err := referrers.Find(ctx, registryAt(t, dstRepo), art.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != want {
			t.Errorf("Referrers=%v: at the destination: %+v, want %d", on, found, want)
		}
	}
}

// pushSBOM pushes to repo an SBOM whose subject is the manifest of
// subject (an image or an index).
func pushSBOM(t *testing.T, repo name.Repository, subject partial.Describable) {
	t.Helper()
	desc, err := partial.Descriptor(subject)
	if err != nil {
		t.Fatal(err)
	}
	sbom, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/spdx+json"),
		mutate.Addendum{Layer: static.NewLayer([]byte(`{}`), "application/json")})
	if err != nil {
		t.Fatal(err)
	}
	sbom = mutate.Subject(sbom, *desc).(v1.Image)
	d, err := sbom.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(repo.Digest(d.String()), sbom); err != nil {
		t.Fatal(err)
	}
}

// A registry that refuses to list referrers fails the copy with
// ErrReferrers (the add-on itself was written).
func TestCopyReferrersRefused(t *testing.T) {
	ctx := context.Background()
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/referrers/") {
			http.Error(w, `{"errors":[{"code":"DENIED","message":"no"}]}`, http.StatusForbidden)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	src := parse(t, strings.TrimPrefix(srv.URL, "http://")+"/addons/a:1")
	if _, err := transfer.Write(ctx, testAddon(t, "a"), src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	dst := parse(t, "oci:"+filepath.Join(t.TempDir(), "out")+":1")
	opts := transfer.Options{Referrers: true, Options: source.Options{Store: newStore(t)}}
	if _, err := transfer.Copy(ctx, src, dst, opts); !errors.Is(err, transfer.ErrReferrers) {
		t.Fatalf("err = %v, want ErrReferrers", err)
	}
	opts.Referrers = false
	if _, err := transfer.Copy(ctx, src, dst, opts); err != nil {
		t.Fatalf("without referrers: %v", err)
	}
}

// CopyReferrers copies what refers to a manifest already copied another
// way (copy --with-images, image by image), to a registry or a layout.
func TestCopyReferrersOfCopied(t *testing.T) {
	ctx := context.Background()
	art := testAddon(t, "img")
	srcHost := testRegistry(t, "")
	src := parse(t, srcHost+"/lib/img@"+art.Digest.String())
	if _, err := transfer.Write(ctx, art, parse(t, srcHost+"/lib/img:1"), transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(srcHost + "/lib/img")
	if err != nil {
		t.Fatal(err)
	}
	sig := cosignSignature(t, art.Digest)
	if err := remote.Write(repo.Tag(referrers.CosignTag(art.Digest, ".sig")), sig); err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(t.TempDir(), "out")
	for _, dst := range []source.Ref{
		parse(t, testRegistry(t, "")+"/mirror/img@"+art.Digest.String()),
		parse(t, "oci:"+layoutDir+"@"+art.Digest.String()),
	} {
		opts := transfer.Options{Options: source.Options{Store: newStore(t)}}
		if _, err := transfer.Copy(ctx, src, dst, opts); err != nil {
			t.Fatal(err)
		}
		n, err := transfer.CopyReferrers(ctx, src, dst, opts)
		if err != nil || n != 1 {
			t.Errorf("%s: CopyReferrers = %d, %v; want 1", dst, n, err)
		}
	}
}

// cosignSignature is a manifest shaped as cosign stores a signature of d:
// a simple-signing layer whose payload names d (not signed: Find checks
// what a manifest is, signature.Verify whether it verifies).
func cosignSignature(t *testing.T, d v1.Hash) v1.Image {
	t.Helper()
	payload := `{"critical":{"identity":{"docker-reference":"x"},"image":{"docker-manifest-digest":"` + d.String() + `"},"type":"cosign container image signature"},"optional":null}`
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{Layer: static.NewLayer([]byte(payload), types.MediaType(referrers.CosignSimpleSigningType))})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// An index kept whole for one platform because something refers to it
// (an SBOM) reports a cosign tag beside it that is not a signature once:
// deciding to keep the index does not report it a second time.
func TestWholeIndexReportsIgnoredOnce(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, "")
	idx, idxDigest, _, _ := testIndex(t)
	src := parse(t, host+"/addons/multi:1")
	if _, err := transfer.Write(ctx, &source.Artifact{Index: idx, Digest: idxDigest}, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(host + "/addons/multi")
	if err != nil {
		t.Fatal(err)
	}
	pushSBOM(t, repo, idx)
	// No layers: not a cosign signature, so it is left out and reported.
	if err := remote.Write(repo.Tag(referrers.CosignTag(idxDigest, ".sig")), empty.Image); err != nil {
		t.Fatal(err)
	}

	var ignored []referrers.Ignored
	opts := transfer.Options{Options: source.Options{Store: newStore(t)}, Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}, Referrers: true}
	opts.ReferrerLimits.Ignored = func(i referrers.Ignored) { ignored = append(ignored, i) }
	res, err := transfer.Copy(ctx, src, source.Ref{Kind: source.KindStore, Name: "multi:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.WholeIndex || res.Digest != idxDigest.String() || res.Referrers != 1 {
		t.Errorf("copied %s (whole index %v) with %d referrers; want the index %s whole, with its SBOM", res.Digest, res.WholeIndex, res.Referrers, idxDigest)
	}
	if len(ignored) != 1 {
		t.Errorf("the cosign tag that is not a signature was reported %d times, want once: %+v", len(ignored), ignored)
	}
}

// registryAt is the referrers Location of repo, reached with the
// default registry options.
func registryAt(t testing.TB, repo name.Repository) referrers.Location {
	t.Helper()
	loc, err := referrers.Registry(repo, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
