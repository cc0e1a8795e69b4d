package imagelock_test

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

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

const (
	dA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	dB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func sample() *imagelock.Lock {
	return &imagelock.Lock{
		MediaType: mediatypes.ImagesLock,
		Subject:   dA,
		Mirror:    "mirror.example:5000",
		Images: []imagelock.Image{
			{Image: "registry.k8s.io/coredns/coredns:v1.11.1", Digest: dB, MediaType: string(mediatypes.OCIIndex), Mirrored: "mirror.example:5000/coredns/coredns@" + dB},
			{Image: "busybox", Digest: dA, Mirrored: "mirror.example:5000/library/busybox@" + dA},
		},
	}
}

// The format is what spec/addon-v1.md documents: a change here is a
// change of the spec.
const golden = `{
  "mediaType": "application/vnd.cncf.addon.images.lock.v1+json",
  "subject": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "mirror": "mirror.example:5000",
  "images": [
    {
      "image": "busybox",
      "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "mirrored": "mirror.example:5000/library/busybox@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "image": "registry.k8s.io/coredns/coredns:v1.11.1",
      "digest": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      "mediaType": "application/vnd.oci.image.index.v1+json",
      "mirrored": "mirror.example:5000/coredns/coredns@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    }
  ]
}
`

func TestEncodeParse(t *testing.T) {
	b, err := sample().Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != golden {
		t.Fatalf("Encode =\n%s\nwant\n%s", b, golden)
	}
	l, err := imagelock.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != golden {
		t.Errorf("round trip =\n%s", again)
	}
	if im, ok := l.Lookup("busybox"); !ok || im.Digest != dA {
		t.Errorf("Lookup(busybox) = %v, %v", im, ok)
	}
	if _, ok := l.Lookup("busybox:latest"); ok {
		t.Error("Lookup matches another spelling: it must match as the manifests write it")
	}
}

func TestParseRefuses(t *testing.T) {
	entry := func(image, digest string) string {
		m, err := imagelock.MirrorReference("", image, digest)
		if err != nil {
			m = "x@" + digest
		}
		return fmt.Sprintf(`{"image":%q,"digest":%q,"mirrored":%q}`, image, digest, m)
	}
	doc := func(mt, subject string, images ...string) string {
		return fmt.Sprintf(`{"mediaType":%q,"subject":%q,"images":[%s]}`, mt, subject, strings.Join(images, ","))
	}
	lockMT := string(mediatypes.ImagesLock)
	tests := []struct{ name, doc, want string }{
		{"not JSON", "{", "unexpected EOF"},
		{"other media type", doc("application/json", dA), "mediaType"},
		{"bad subject", doc(lockMT, "sha256:12"), "subject"},
		{"sha512 digest", doc(lockMT, dA, entry("busybox", "sha512:"+strings.Repeat("a", 128))), "sha256"},
		{"bad reference", doc(lockMT, dA, entry("Bad Name", dA)), "images[0]"},
		{"no mirrored", fmt.Sprintf(`{"mediaType":%q,"subject":%q,"images":[{"image":"busybox","digest":%q}]}`, lockMT, dA, dA), "no mirrored"},
		{"mirrored elsewhere", fmt.Sprintf(`{"mediaType":%q,"subject":%q,"images":[{"image":"busybox","digest":%q,"mirrored":"evil.example/library/busybox@%s"}]}`, lockMT, dA, dA, dA), "mirrored"},
		{"mirrored under another mirror", fmt.Sprintf(`{"mediaType":%q,"subject":%q,"mirror":"m.example","images":[{"image":"busybox","digest":%q,"mirrored":"library/busybox@%s"}]}`, lockMT, dA, dA, dA), "mirrored"},
		{"twice", doc(lockMT, dA, entry("busybox", dA), entry("busybox", dB)), "twice"},
		{"unknown field", `{"mediaType":"` + lockMT + `","subject":"` + dA + `","images":[],"extra":1}`, "unknown field"},
		{"two documents", doc(lockMT, dA) + doc(lockMT, dA), "after the document"},
		{"too large", `{"x":"` + strings.Repeat("a", safetree.DefaultMaxLockBytes) + `"}`, "image lock size limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := imagelock.Parse([]byte(tc.doc))
			if !errors.Is(err, imagelock.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

func TestMirrorReference(t *testing.T) {
	tests := []struct{ mirror, image, want, err string }{
		{"mirror.example", "registry.k8s.io/coredns/coredns:v1.11.1", "mirror.example/coredns/coredns@" + dA, ""},
		{"127.0.0.1:5000/", "nginx:1.27", "127.0.0.1:5000/library/nginx@" + dA, ""},
		{"127.0.0.1:5000/team/mirror", "ghcr.io/org/app@" + dB, "127.0.0.1:5000/team/mirror/org/app@" + dA, ""},
		{"", "quay.io/a/b:1", "a/b@" + dA, ""},
		{"mirror.example", "Not A Ref", "", "Not A Ref"},
		{"mirror.example/UPPER", "busybox", "", "mirror"},
	}
	for _, tc := range tests {
		got, err := imagelock.MirrorReference(tc.mirror, tc.image, dA)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("MirrorReference(%q, %q) = %q, %v; want an error naming %q", tc.mirror, tc.image, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("MirrorReference(%q, %q) = %q, %v; want %q", tc.mirror, tc.image, got, err, tc.want)
		}
	}
}

func descriptorOf(t *testing.T, img v1.Image) v1.Descriptor {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	sz, err := img.Size()
	if err != nil {
		t.Fatal(err)
	}
	mt, err := img.MediaType()
	if err != nil {
		t.Fatal(err)
	}
	return v1.Descriptor{MediaType: mt, Size: sz, Digest: d}
}

// TestRegistryRoundTrip pushes a lock beside an add-on and finds it again,
// on a registry with the referrers API and on one without it (where it is
// listed in the sha256-<hex> tag's index), beside a referrer of another
// type that FromRegistry must skip.
func TestRegistryRoundTrip(t *testing.T) {
	for _, referrers := range []bool{true, false} {
		t.Run(fmt.Sprintf("referrers=%v", referrers), func(t *testing.T) {
			srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.WithReferrersSupport(referrers), ggcrregistry.Logger(log.New(io.Discard, "", 0))))
			t.Cleanup(srv.Close)
			u, _ := url.Parse(srv.URL)
			repo, err := name.NewRepository(u.Host + "/addons/demo")
			if err != nil {
				t.Fatal(err)
			}
			addonImg, err := random.Image(64, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(repo.Tag("1"), addonImg); err != nil {
				t.Fatal(err)
			}
			subject := descriptorOf(t, addonImg)
			ropts := registry.Options{}
			ctx := context.Background()
			if _, err := imagelock.FromRegistry(ctx, repo, subject.Digest, ropts); !errors.Is(err, imagelock.ErrNoLock) {
				t.Fatalf("before any push: err = %v, want ErrNoLock", err)
			}
			// Another referrer: a lock of another subject pushed as if for
			// this one must not be taken.
			other := sample()
			if _, err := imagelock.Push(ctx, other, v1.Descriptor{MediaType: subject.MediaType, Size: 1, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}}, repo, ropts); err != nil {
				t.Fatal(err)
			}
			ld, err := imagelock.Push(ctx, sample(), subject, repo, ropts)
			if err != nil {
				t.Fatal(err)
			}
			locks, err := imagelock.FromRegistry(ctx, repo, subject.Digest, ropts)
			if err != nil {
				t.Fatal(err)
			}
			if len(locks) != 1 || locks[0].Subject != subject.Digest.String() || len(locks[0].Images) != 2 {
				t.Fatalf("locks = %+v", locks)
			}
			if !referrers {
				// The tag schema: an index tagged sha256-<hex> lists it.
				idx, err := remote.Index(repo.Tag(strings.Replace(subject.Digest.String(), ":", "-", 1)))
				if err != nil {
					t.Fatal(err)
				}
				im, err := idx.IndexManifest()
				if err != nil {
					t.Fatal(err)
				}
				if len(im.Manifests) != 1 || im.Manifests[0].Digest != ld || im.Manifests[0].ArtifactType != string(mediatypes.ImagesLock) {
					t.Errorf("fallback index = %+v", im.Manifests)
				}
			}
		})
	}
}

// TestLayoutRoundTrip stores a lock in an OCI layout and finds it there,
// and in the oci-archive made of it, with no network.
func TestLayoutRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir, st, subject := layoutWithAddon(t)
	if _, err := imagelock.FromLayout(st, subject.Digest); !errors.Is(err, imagelock.ErrNoLock) {
		t.Fatalf("err = %v, want ErrNoLock", err)
	}
	if _, err := imagelock.Store(ctx, sample(), subject, st); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "demo.tar")
	if err := layout.WriteArchive(dir, archive); err != nil {
		t.Fatal(err)
	}
	arc, err := layout.OpenArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer arc.Close()
	for name, in := range map[string]*layout.Store{"layout": st, "archive": arc} {
		locks, err := imagelock.FromLayout(in, subject.Digest)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := locks[0].Encode()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(golden, dA, subject.Digest.String(), 1)
		if string(b) != want {
			t.Errorf("%s: lock =\n%s", name, b)
		}
	}
}

// TestLayoutFallbackIndex finds a lock listed only in a sha256-<hex>
// referrers index of a layout, as a copy that carries the tag schema
// leaves it.
func TestLayoutFallbackIndex(t *testing.T) {
	ctx := context.Background()
	_, st, subject := layoutWithAddon(t)
	subject.Annotations = nil
	lockImg, err := imagelock.Artifact(sample(), subject)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: lockImg}), types.OCIImageIndex)
	if _, err := st.WriteIndex(ctx, idx, nil, "demo:"+strings.Replace(subject.Digest.String(), ":", "-", 1)); err != nil {
		t.Fatal(err)
	}
	locks, err := imagelock.FromLayout(st, subject.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) != 1 || locks[0].Subject != subject.Digest.String() {
		t.Errorf("locks = %+v", locks)
	}
}

// layoutWithAddon makes an OCI layout holding one random image, tagged
// demo:1, as the add-on a lock refers to.
func layoutWithAddon(t *testing.T) (string, *layout.Store, v1.Descriptor) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	addonImg, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := st.WriteImage(context.Background(), addonImg, nil, "demo:1")
	if err != nil {
		t.Fatal(err)
	}
	return dir, st, subject
}

// A lock resolves tags; it never overrules a digest the add-on pins (the
// air-gap bypass of issue 25).
func TestValidateRefusesRedirectedPin(t *testing.T) {
	const good = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const evil = "sha256:6666666666666666666666666666666666666666666666666666666666666666"
	for _, tc := range []struct {
		image, digest string
		ok            bool
	}{
		{"registry.example/lib/app@" + good, good, true},
		{"registry.example/lib/app:1.0@" + good, good, true},
		{"registry.example/lib/app:1.0", evil, true},
		{"registry.example/lib/app@" + good, evil, false},
		{"registry.example/lib/app:1.0@" + good, evil, false},
	} {
		m, err := imagelock.MirrorReference("mirror.example", tc.image, tc.digest)
		if err != nil {
			t.Fatal(err)
		}
		l := &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: good, Mirror: "mirror.example",
			Images: []imagelock.Image{{Image: tc.image, Digest: tc.digest, Mirrored: m}}}
		err = l.Validate()
		if tc.ok && err != nil {
			t.Errorf("%s locked as %s: %v", tc.image, tc.digest, err)
		}
		if !tc.ok && (!errors.Is(err, imagelock.ErrPinnedDigest) || !errors.Is(err, imagelock.ErrInvalid)) {
			t.Errorf("%s locked as %s: %v, want imagelock.ErrPinnedDigest and imagelock.ErrInvalid", tc.image, tc.digest, err)
		}
	}
}
