package referrers_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// registryRepo serves go-containerregistry's registry on 127.0.0.1, with
// or without the referrers API, and returns a repository in it.
func registryRepo(t *testing.T, api bool) name.Repository {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(
		ggcrregistry.Logger(log.New(io.Discard, "", 0)),
		ggcrregistry.WithReferrersSupport(api),
	))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// artifact is a small OCI artifact of type art, referring to subject
// when it is not nil.
func artifact(t *testing.T, art types.MediaType, content string, subject *v1.Descriptor) v1.Image {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), art)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(content), "application/json")})
	if err != nil {
		t.Fatal(err)
	}
	if subject != nil {
		img = mutate.Subject(img, *subject).(v1.Image)
	}
	return img
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

func manifestOf(t *testing.T, img v1.Image) *referrers.Manifest {
	t.Helper()
	d, err := partial.Descriptor(img)
	if err != nil {
		t.Fatal(err)
	}
	return &referrers.Manifest{Descriptor: *d, Image: img}
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixture is a subject with an SBOM referring to it, a signature of the
// SBOM referring to the SBOM (a second level), and a cosign-style .sig
// tag of the subject.
type fixture struct {
	subject, sbom, sbomSig, cosignSig v1.Image
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	subject, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := partial.Descriptor(subject)
	if err != nil {
		t.Fatal(err)
	}
	sbom := artifact(t, "application/vnd.example.sbom", `{"sbom":1}`, sd)
	bd, err := partial.Descriptor(sbom)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{
		subject:   subject,
		sbom:      sbom,
		sbomSig:   artifact(t, "application/vnd.example.signature", `{"sig":1}`, bd),
		cosignSig: cosignSignature(t, sd.Digest),
	}
}

// put writes the fixture to loc.
func (f fixture) put(t *testing.T, loc referrers.Location) {
	t.Helper()
	ctx := context.Background()
	for _, w := range []struct {
		img v1.Image
		tag string
	}{
		{f.subject, "v1"},
		{f.sbom, ""},
		{f.sbomSig, ""},
		{f.cosignSig, referrers.CosignTag(digestOf(t, f.subject), ".sig")},
	} {
		if err := loc.Write(ctx, manifestOf(t, w.img), w.tag); err != nil {
			t.Fatal(err)
		}
	}
}

// found lists what refers to d at loc as "DIGEST TAG" strings.
func found(t *testing.T, loc referrers.Location, d v1.Hash) []string {
	t.Helper()
	fs, err := referrers.Find(context.Background(), loc, d)
	if err != nil {
		t.Fatalf("find at %s: %v", loc, err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Digest+" "+f.Tag)
	}
	slices.Sort(out)
	return out
}

type locKind struct {
	name string
	make func(t *testing.T) referrers.Location
}

var locKinds = []locKind{
	{"registry-with-referrers-api", func(t *testing.T) referrers.Location {
		return registryAt(t, registryRepo(t, true))
	}},
	{"registry-without-referrers-api", func(t *testing.T) referrers.Location {
		return registryAt(t, registryRepo(t, false))
	}},
	{"layout", func(t *testing.T) referrers.Location {
		st, err := layout.Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return referrers.Layout(st, "")
	}},
	{"store", func(t *testing.T) referrers.Location {
		st, err := layout.Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return referrers.Layout(st, "registry.example/addons/demo")
	}},
}

func TestCopyBetweenEveryKind(t *testing.T) {
	for _, sk := range locKinds {
		for _, dk := range locKinds {
			t.Run(sk.name+"-to-"+dk.name, func(t *testing.T) {
				ctx := context.Background()
				f := newFixture(t)
				src, dst := sk.make(t), dk.make(t)
				f.put(t, src)
				subject := digestOf(t, f.subject)
				if err := dst.Write(ctx, manifestOf(t, f.subject), "v1"); err != nil {
					t.Fatal(err)
				}
				copied, err := referrers.Copy(ctx, src, dst, []v1.Hash{subject}, referrers.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if len(copied) != 3 {
					t.Errorf("copied %d, want 3 (SBOM, its signature, cosign's .sig): %+v", len(copied), copied)
				}
				want := []string{
					digestOf(t, f.cosignSig).String() + " " + referrers.CosignTag(subject, ".sig"),
					digestOf(t, f.sbom).String() + " ",
				}
				slices.Sort(want)
				if got := found(t, dst, subject); !slices.Equal(got, want) {
					t.Errorf("referrers of the subject at the destination:\n got %q\nwant %q", got, want)
				}
				wantSBOM := []string{digestOf(t, f.sbomSig).String() + " "}
				if got := found(t, dst, digestOf(t, f.sbom)); !slices.Equal(got, wantSBOM) {
					t.Errorf("referrers of the SBOM at the destination:\n got %q\nwant %q", got, wantSBOM)
				}
			})
		}
	}
}

// TestFallbackTagWritten checks that a registry without the referrers API
// gets the sha256-HEX index that cosign and oras read, listing the SBOM.
func TestFallbackTagWritten(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := referrers.Layout(st, "")
	f.put(t, src)
	repo := registryRepo(t, false)
	dst := registryAt(t, repo)
	subject := digestOf(t, f.subject)
	if err := dst.Write(ctx, manifestOf(t, f.subject), "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := referrers.Copy(ctx, src, dst, []v1.Hash{subject}, referrers.Options{}); err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(repo.Tag(strings.Replace(subject.String(), ":", "-", 1)))
	if err != nil {
		t.Fatalf("the fallback tag: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digestOf(t, f.sbom) || im.Manifests[0].ArtifactType != "application/vnd.example.sbom" {
		t.Errorf("fallback index lists %+v, want the SBOM %s", im.Manifests, digestOf(t, f.sbom))
	}
}

func TestCopyBounds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := referrers.Layout(st, "")
	f.put(t, src)
	subject := digestOf(t, f.subject)
	tests := []struct {
		name      string
		opts      referrers.Options
		wantCount int
		wantErr   error
	}{
		{"one level", referrers.Options{MaxDepth: 1}, 2, nil},
		{"default", referrers.Options{}, 3, nil},
		{"capped", referrers.Options{MaxCount: 1}, 1, referrers.ErrTooMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, err := layout.Init(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			copied, err := referrers.Copy(ctx, src, referrers.Layout(dst, ""), []v1.Hash{subject}, tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(copied) != tt.wantCount {
				t.Errorf("copied %d, want %d: %+v", len(copied), tt.wantCount, copied)
			}
		})
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
