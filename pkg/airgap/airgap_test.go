package airgap_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/folder"
	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/signature"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// testRegistry is go-containerregistry's registry on 127.0.0.1.
func testRegistry(t *testing.T, referrers bool) (host string, stop func()) {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.WithReferrersSupport(referrers), ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host, srv.Close
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func digestOf(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type fixture struct {
	host         string
	one, multi   string // references as the add-on writes them
	oneD, multiD v1.Hash
	arm64D       v1.Hash // the linux/arm64 manifest of multi
	addon        string  // the add-on's reference
	addonD       v1.Hash
	stopRegistry func()
}

// newFixture pushes an image, a two-platform index and an add-on whose
// Deployment runs both to a registry.
func newFixture(t *testing.T, referrers bool, extraImages ...string) *fixture {
	t.Helper()
	f := &fixture{}
	f.host, f.stopRegistry = testRegistry(t, referrers)
	img := func() v1.Image {
		i, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		return mutate.MediaType(i, types.OCIManifestSchema1)
	}
	// one keeps go-containerregistry's Docker media types: a Docker
	// schema 2 image travels byte for byte too.
	one, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	arm := img()
	multi := mutate.IndexMediaType(mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: img(), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	), types.OCIImageIndex)
	f.one, f.multi = f.host+"/app/one:1", f.host+"/app/multi:2"
	if err := remote.Write(mustRef(t, f.one), one); err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(mustRef(t, f.multi), multi); err != nil {
		t.Fatal(err)
	}
	f.oneD, f.multiD, f.arm64D = digestOf(t, one), digestOf(t, multi), digestOf(t, arm)
	containers := ""
	for i, im := range append([]string{f.one, f.multi}, extraImages...) {
		containers += fmt.Sprintf("      - name: c%d\n        image: %s\n", i, im)
	}
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n" + containers
	tree, err := folder.LoadBytes("deploy.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), tree, build.Options{Name: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	f.addon = f.host + "/addons/demo:1"
	if err := remote.Write(mustRef(t, f.addon), res.Image); err != nil {
		t.Fatal(err)
	}
	f.addonD = res.Digest
	return f
}

func parse(t *testing.T, s string) source.Ref {
	t.Helper()
	r, err := source.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hasSignature fails t unless the manifest d at loc has a signature
// (signature.Tag) among its referrers.
func hasSignature(t *testing.T, loc referrers.Location, d v1.Hash) {
	t.Helper()
	found, err := referrers.Find(context.Background(), loc, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.Tag == signature.Tag(d) {
			return
		}
	}
	t.Errorf("%s at %s: referrers %+v, no signature", d, loc, found)
}

// TestCopyAcrossTheGap copies an add-on and its images from registry A to
// an oci-archive, then, A gone, from the archive to registry B; the
// digests never change, B holds the lock (one: the archive's own stays
// behind), and the signature of the add-on and of each image travels
// beside it, pinned to its digest.
func TestCopyAcrossTheGap(t *testing.T) {
	for _, api := range []bool{false, true} {
		t.Run(fmt.Sprintf("referrers=%v", api), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, api)
			archive := filepath.Join(t.TempDir(), "demo.tar")
			signed := []struct {
				repo string // under the registry host
				d    v1.Hash
			}{{"addons/demo", f.addonD}, {"app/one", f.oneD}, {"app/multi", f.multiD}}
			signer := testSigner(t)
			for _, s := range signed {
				repo, err := name.NewRepository(f.host + "/" + s.repo)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := signature.Sign(ctx, registryAt(t, repo), s.d, signer, signature.SignOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var opts airgap.Options
			opts.Referrers = true
			res, err := airgap.Copy(ctx, parse(t, f.addon), parse(t, "oci-archive:"+archive+":1"), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Addon.Digest != f.addonD.String() || res.Referrers != 3 {
				t.Errorf("result = %+v", res)
			}
			want := map[string]string{f.one: f.oneD.String(), f.multi: f.multiD.String()}
			if len(res.Lock.Images) != 2 {
				t.Fatalf("lock = %+v", res.Lock)
			}
			// Result.Lock is the document written, media type and all.
			if err := res.Lock.Validate(); err != nil {
				t.Errorf("the result's lock is not the lock document: %v", err)
			}
			for _, im := range res.Lock.Images {
				if want[im.Image] != im.Digest {
					t.Errorf("lock entry %+v, want digest %s", im, want[im.Image])
				}
			}
			ast, err := layout.OpenArchive(archive)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range signed {
				hasSignature(t, referrers.Layout(ast, ""), s.d)
			}
			ast.Close()

			// The gap.
			f.stopRegistry()
			b, _ := testRegistry(t, api)
			res2, err := airgap.Copy(ctx, parse(t, "oci-archive:"+archive+":1"), parse(t, b+"/addons/demo:1"), opts)
			if err != nil {
				t.Fatal(err)
			}
			// The three signatures again; the archive's lock is not among
			// them.
			if res2.Addon.Digest != f.addonD.String() || res2.Lock.Mirror != b || res2.Referrers != 3 {
				t.Errorf("second copy = %+v", res2)
			}
			for _, s := range signed {
				repo, err := name.NewRepository(b + "/" + s.repo)
				if err != nil {
					t.Fatal(err)
				}
				hasSignature(t, registryAt(t, repo), s.d)
			}
			for _, in := range []struct {
				repo string
				d    v1.Hash
			}{{"app/one", f.oneD}, {"app/multi", f.multiD}, {"app/multi", f.arm64D}} {
				got, err := remote.Head(mustRef(t, b+"/"+in.repo+"@"+in.d.String()))
				if err != nil || got.Digest != in.d {
					t.Errorf("%s@%s in B: %v, %v", in.repo, in.d, got, err)
				}
			}
			locks, err := imagelock.FromRegistry(ctx, mustRef(t, b+"/addons/demo:1").Context(), f.addonD, registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if l := airgap.SelectLock(locks, b); l.Mirror != b || len(l.Images) != 2 {
				t.Errorf("lock in B = %+v", l)
			}
			// Through a SOURCE, as unpack --relocate finds it.
			if found, err := airgap.FindLocks(ctx, parse(t, b+"/addons/demo:1"), source.Options{}); err != nil || len(found) != 1 || found[0].Mirror != b {
				t.Errorf("FindLocks = %+v, %v", found, err)
			}
			// And on from B to an OCI layout: the images come from B, as
			// its lock says.
			dir := filepath.Join(t.TempDir(), "layout")
			if _, err := airgap.Copy(ctx, parse(t, b+"/addons/demo:1"), parse(t, "oci:"+dir+":1"), airgap.Options{}); err != nil {
				t.Fatal(err)
			}
			st, err := layout.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []v1.Hash{f.oneD, f.multiD, f.arm64D} {
				if _, err := st.Resolve(d.String()); err != nil && d != f.arm64D {
					t.Errorf("layout: %v", err)
				}
				if !st.HasBlob(d) {
					t.Errorf("layout lacks %s", d)
				}
			}

			// The tag moves (to an image with no lock) after the add-on
			// was read by it: its locks are found by the digest it was
			// read as, not by the tag resolved again.
			other, err := random.Image(64, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(mustRef(t, b+"/addons/demo:1"), other); err != nil {
				t.Fatal(err)
			}
			if _, err := airgap.FindLocks(ctx, parse(t, b+"/addons/demo:1"), source.Options{}); !errors.Is(err, imagelock.ErrNoLock) {
				t.Errorf("FindLocks of the moved tag = %v, want ErrNoLock", err)
			}
			if found, err := airgap.FindLocksOf(ctx, parse(t, b+"/addons/demo:1"), b+"/addons/demo@"+f.addonD.String(), source.Options{}); err != nil || len(found) != 1 || found[0].Mirror != b {
				t.Errorf("FindLocksOf the digest read = %+v, %v", found, err)
			}
		})
	}
}

// TestCopyPlatform copies one platform of an index: the lock names that
// platform's manifest; copied on from there, it stays that manifest.
func TestCopyPlatform(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	dir := filepath.Join(t.TempDir(), "layout")
	var opts airgap.Options
	opts.Platform = &v1.Platform{OS: "linux", Architecture: "arm64"}
	res, err := airgap.Copy(ctx, parse(t, f.addon), parse(t, "oci:"+dir+":1"), opts)
	if err != nil {
		t.Fatal(err)
	}
	im, ok := res.Lock.Lookup(f.multi)
	if !ok || im.Digest != f.arm64D.String() || im.MediaType != string(types.OCIManifestSchema1) {
		t.Fatalf("multi in the lock = %+v, want the arm64 manifest %s", im, f.arm64D)
	}
	again := filepath.Join(t.TempDir(), "again")
	res2, err := airgap.Copy(ctx, parse(t, "oci:"+dir+":1"), parse(t, "oci:"+again+":1"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if im2, _ := res2.Lock.Lookup(f.multi); im2.Digest != im.Digest {
		t.Errorf("copied on: %+v, want %s", im2, im.Digest)
	}
}

func TestCopyRefuses(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	tmp := t.TempDir()
	missing := newFixture(t, false, "127.0.0.1:1/nowhere/img:1")
	// A lock in the registry that sends readers to another registry.
	foreign := newFixture(t, false)
	bad := &imagelock.Lock{Mirror: "evil.example", Images: []imagelock.Image{{Image: foreign.one, Digest: foreign.oneD.String()}}}
	bad.Images[0].Mirrored, _ = imagelock.MirrorReference(bad.Mirror, foreign.one, foreign.oneD.String())
	subject := v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: 1, Digest: foreign.addonD}
	if _, err := imagelock.Push(ctx, bad, subject, mustRef(t, foreign.addon).Context(), registry.Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		src, dst string
		want     error
		msg      string
	}{
		{"docker-archive", f.addon, "docker-archive:" + filepath.Join(tmp, "x.tar"), source.ErrUnsupportedDestination, "docker-archive"},
		{"archive without a tag", f.addon, "oci-archive:" + filepath.Join(tmp, "y.tar"), airgap.ErrNoTag, ":TAG"},
		{"image out of reach", missing.addon, "oci:" + filepath.Join(tmp, "m") + ":1", nil, "127.0.0.1:1/nowhere/img:1"},
		{"lock of another registry", foreign.addon, "oci:" + filepath.Join(tmp, "f") + ":1", airgap.ErrForeignMirror, "evil.example"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := airgap.Copy(ctx, parse(t, tc.src), parse(t, tc.dst), airgap.Options{})
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v naming %q", err, tc.want, tc.msg)
			}
		})
	}
	// Nothing half-written: the refused archive does not exist.
	if _, err := layout.OpenArchive(filepath.Join(tmp, "y.tar")); err == nil {
		t.Error("a refused archive was written")
	}
}

// TestCopyToStore copies an add-on with its images into a store: the
// images are untagged entries beside the tagged add-on, and the lock is
// found there.
func TestCopyToStore(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	st, err := layout.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	opts := airgap.Options{}
	opts.Store = st
	dst := source.Ref{Kind: source.KindStore, Name: "demo:1"}
	res, err := airgap.Copy(ctx, parse(t, f.addon), dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	// REPO@DIGEST, as source.Write gives for the store and a registry
	// (the tag of a pinned reference is dropped).
	if want := "demo@" + f.addonD.String(); res.Addon.Reference != want {
		t.Errorf("reference %s, want %s", res.Addon.Reference, want)
	}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name != "demo:1" || entries[0].Descriptor.Digest != f.addonD {
		t.Errorf("tagged entries = %+v, want only demo:1", entries)
	}
	for _, d := range []v1.Hash{f.oneD, f.multiD} {
		if _, err := st.Resolve(d.String()); err != nil {
			t.Errorf("store: %v", err)
		}
	}
	locks, err := airgap.FindLocks(ctx, dst, source.Options{Store: st})
	if err != nil || len(locks) != 1 || locks[0].Mirror != "" || len(locks[0].Images) != 2 {
		t.Fatalf("Find = %+v, %v", locks, err)
	}
}

// TestCopyPlatformKeepsSignedImageIndex copies one platform of an add-on
// whose image index is signed: the index's signature covers the index,
// not the platform's manifest chosen from it, so the copy keeps the index
// whole (as a copy keeps a signed add-on index whole) and its signature
// travels; the lock names the index.
func TestCopyPlatformKeepsSignedImageIndex(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	signer := testSigner(t)
	repo, err := name.NewRepository(f.host + "/app/multi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Sign(ctx, registryAt(t, repo), f.multiD, signer, signature.SignOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	var opts airgap.Options
	opts.Referrers = true
	opts.Platform = &v1.Platform{OS: "linux", Architecture: "arm64"}
	res, err := airgap.Copy(ctx, parse(t, f.addon), parse(t, "oci:"+dir+":1"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := res.Lock.Lookup(f.multi); im.Digest != f.multiD.String() {
		t.Errorf("multi in the lock = %+v, want the signed index %s", im, f.multiD)
	}
	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	hasSignature(t, referrers.Layout(st, ""), f.multiD)
	// Unsigned, one platform is still one platform's manifest.
	if im, _ := res.Lock.Lookup(f.one); im.Digest != f.oneD.String() {
		t.Errorf("one in the lock = %+v, want %s", im, f.oneD)
	}
}

// testSigner is a new cosign key pair's signer.
func testSigner(t *testing.T) sigsig.SignerVerifier {
	t.Helper()
	priv, _, err := signature.GenerateKeyPair(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signature.LoadPrivateKey("test", priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// A layout whose ref name is a whole reference (skopeo's
// oci:DIR:REGISTRY/REPO:TAG) is read where source.Open found it: its lock
// is found, and a copy with images reads them from that layout.
func TestFullReferenceNameInLayout(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, false)
	dir := filepath.Join(t.TempDir(), "layout")
	if _, err := airgap.Copy(ctx, parse(t, f.addon), parse(t, "oci:"+dir+":1"), airgap.Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := layout.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := "localhost:5000/addons/demo:1"
	if _, err := st.Tag("1", full); err != nil {
		t.Fatal(err)
	}
	src := parse(t, "oci:"+dir+":"+full)
	if locks, err := airgap.FindLocks(ctx, src, source.Options{}); err != nil || len(locks) != 1 {
		t.Errorf("FindLocks(%s): %d locks, %v", src, len(locks), err)
	}
	if _, err := airgap.Copy(ctx, src, parse(t, "oci:"+filepath.Join(t.TempDir(), "again")+":1"), airgap.Options{}); err != nil {
		t.Errorf("copy from %s: %v", src, err)
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
