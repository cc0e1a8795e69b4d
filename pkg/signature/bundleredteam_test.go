package signature_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// hostileRegistry is a registry with the referrers API (go-
// containerregistry's) in front of which the test lies: it may answer
// the referrers listing itself (listing, given the true one) and serve
// other bytes for a manifest (swap), and it counts the GETs of each
// manifest.
type hostileRegistry struct {
	loc referrers.Location
	url string
	mu  sync.Mutex
	// listing rewrites the true listing (an index manifest's entries).
	listing func(real []v1.Descriptor) []v1.Descriptor
	swap    map[string][]byte // manifest digest -> bytes served
	gets    map[string]int    // manifest digest -> GETs
}

func newHostileRegistry(t *testing.T) *hostileRegistry {
	t.Helper()
	h := &hostileRegistry{swap: map[string][]byte{}, gets: map[string]int{}}
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)), ggcrregistry.WithReferrersSupport(true))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		listing, swap := h.listing, h.swap[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]]
		if i := strings.Index(r.URL.Path, "/manifests/sha256:"); i >= 0 && r.Method == http.MethodGet {
			h.gets[r.URL.Path[i+len("/manifests/"):]]++
		}
		h.mu.Unlock()
		switch {
		case strings.Contains(r.URL.Path, "/referrers/") && listing != nil:
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var im v1.IndexManifest
			if err := json.Unmarshal(rec.Body.Bytes(), &im); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			im.Manifests = listing(im.Manifests)
			w.Header().Set("Content-Type", string(types.OCIImageIndex))
			json.NewEncoder(w).Encode(&im)
		case swap != nil && strings.Contains(r.URL.Path, "/manifests/") && r.Method != http.MethodPut:
			w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
			w.Header().Set("Docker-Content-Digest", r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			w.Header().Set("Content-Length", fmt.Sprint(len(swap)))
			if r.Method == http.MethodGet {
				w.Write(swap)
			}
		default:
			inner.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	h.loc = registryAt(t, repo)
	h.url = srv.URL + "/v2/addons/demo/manifests/"
	return h
}

// put PUTs the index raw by its digest, as anyone who can push can.
func (h *hostileRegistry) put(t *testing.T, raw []byte) v1.Hash {
	t.Helper()
	d, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPut, h.url+d.String(), bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", string(types.OCIImageIndex))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT %s: %s", d, resp.Status)
	}
	return d
}

func (h *hostileRegistry) set(listing func([]v1.Descriptor) []v1.Descriptor) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listing = listing
	clear(h.gets)
}

func (h *hostileRegistry) getsOf(d v1.Hash) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gets[d.String()]
}

// A registry (or anyone who can push to it) lies to a verification in
// every way the bundle search has met so far; none makes Verify pass
// without a bundle the key made about this digest, and each fails
// closed within the search's bounds:
//   - a listing that names one junk referrer hundreds of times reads it
//     once, and does not count it hundreds of times against the bound;
//   - a listing that names the subject itself, and an index referring to
//     it, as bundles: each is read once, neither is followed;
//   - a listing whose artifactType hides the real bundle (an SBOM's) does
//     not make the search read it: no signature, never a pass;
//   - a manifest served under another manifest's digest (the real
//     bundle's, for a junk one) is refused, not verified.
func TestVerifyBundleRegistryLies(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	verify := func(loc referrers.Location, d v1.Hash) (*signature.Verified, error) {
		return (&signature.KeyVerifier{Keys: keys}).Verify(ctx, loc, d)
	}
	setup := func(t *testing.T) (*hostileRegistry, v1.Hash, v1.Descriptor) {
		h := newHostileRegistry(t)
		d := putImage(t, h.loc, "lied-about")
		m, err := h.loc.Open(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return h, d, m.Descriptor
	}

	t.Run("duplicate entries", func(t *testing.T) {
		h, d, subject := setup(t)
		junk := junkReferrer(t, forgeries(t, d, good, other)[0], subject, 0)
		if err := h.loc.Write(ctx, junk, ""); err != nil {
			t.Fatal(err)
		}
		h.set(func(real []v1.Descriptor) []v1.Descriptor {
			var out []v1.Descriptor
			for range safetree.DefaultMaxBundleReferrers + 44 {
				out = append(out, real...)
			}
			return out
		})
		_, err := verify(h.loc, d)
		var search *signature.BundleSearchError
		if !errors.Is(err, signature.ErrBadSignature) || errors.As(err, &search) {
			t.Errorf("err = %v, want ErrBadSignature from the one junk bundle, the search not bounded", err)
		}
		if n := h.getsOf(junk.Descriptor.Digest); n != 1 {
			t.Errorf("the junk referrer listed %d times was read %d times, want once", safetree.DefaultMaxBundleReferrers+44, n)
		}
	})

	t.Run("the subject itself and an index", func(t *testing.T) {
		h, d, subject := setup(t)
		// An index that refers to the subject and lists it: a cycle
		// subject -> index -> subject, were it followed.
		raw, err := json.Marshal(&v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex,
			Manifests: []v1.Descriptor{subject}, Subject: &subject})
		if err != nil {
			t.Fatal(err)
		}
		idx := h.put(t, raw)
		h.set(func(real []v1.Descriptor) []v1.Descriptor {
			self := subject
			self.ArtifactType = string(mediatypes.SigstoreBundle)
			out := []v1.Descriptor{self}
			for _, r := range real {
				r.ArtifactType = string(mediatypes.SigstoreBundle)
				out = append(out, r, r)
			}
			return out
		})
		_, err = verify(h.loc, d)
		if !errors.Is(err, signature.ErrBadSignature) {
			t.Fatalf("err = %v, want ErrBadSignature", err)
		}
		if !strings.Contains(err.Error(), "an index, not a bundle manifest") || !strings.Contains(err.Error(), "about another subject") {
			t.Errorf("err = %v, want the index and the subject each refused", err)
		}
		if n, m := h.getsOf(d), h.getsOf(idx); n != 1 || m != 1 {
			t.Errorf("the subject was read %d times, the index %d: want once each", n, m)
		}
	})

	t.Run("artifactType hides the real bundle", func(t *testing.T) {
		h, d, subject := setup(t)
		real := newBundleImage(t, cosign3Bundle(t, good.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)), subject, mediatypes.CosignSignPredicateType)
		if err := h.loc.Write(ctx, real, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := verify(h.loc, d); err != nil {
			t.Fatalf("the true listing: %v", err)
		}
		h.set(func(real []v1.Descriptor) []v1.Descriptor {
			for i := range real {
				real[i].ArtifactType = "application/spdx+json"
			}
			return real
		})
		if got, err := verify(h.loc, d); got != nil || !errors.Is(err, signature.ErrNoSignature) {
			t.Errorf("verified %+v, %v; want ErrNoSignature", got, err)
		}
		if n := h.getsOf(real.Descriptor.Digest); n != 0 {
			t.Errorf("the bundle listed as an SBOM was read %d times", n)
		}
	})

	t.Run("a manifest served under another digest", func(t *testing.T) {
		h, d, subject := setup(t)
		real := newBundleImage(t, cosign3Bundle(t, good.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)), subject, mediatypes.CosignSignPredicateType)
		junk := junkReferrer(t, forgeries(t, d, good, other)[0], subject, 0)
		for _, m := range []*referrers.Manifest{real, junk} {
			if err := h.loc.Write(ctx, m, ""); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := real.Image.RawManifest()
		if err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		h.swap[junk.Descriptor.Digest.String()] = raw
		h.mu.Unlock()
		h.set(func(listed []v1.Descriptor) []v1.Descriptor {
			var out []v1.Descriptor
			for _, r := range listed {
				if r.Digest == junk.Descriptor.Digest {
					out = append(out, r)
				}
			}
			return out
		})
		if got, err := verify(h.loc, d); got != nil || err == nil {
			t.Errorf("verified %+v, %v: the real bundle's manifest served as the junk one's was taken", got, err)
		} else {
			t.Logf("%v", err)
		}
	})
}

// A referrer listed and gone (a stale sha256-HEX fallback index, which
// anyone who can push rewrites and no registry cleans when a referrer is
// deleted) stopped the whole search with an error: the real bundle after
// it was never read. It is one reason among the others, as a copy skips
// it.
func TestVerifyBundleListedButGone(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	h := newHostileRegistry(t)
	d := putImage(t, h.loc, "stale")
	m, err := h.loc.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	real := newBundleImage(t, cosign3Bundle(t, good.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)), m.Descriptor, mediatypes.CosignSignPredicateType)
	if err := h.loc.Write(ctx, real, ""); err != nil {
		t.Fatal(err)
	}
	// Sorting first: never pushed, listed all the same.
	gone := junkReferrer(t, forgeries(t, d, good, other)[0], m.Descriptor, 0).Descriptor
	gone.Digest.Hex = strings.Repeat("0", 64)
	gone.ArtifactType = string(mediatypes.SigstoreBundle)
	h.set(func(listed []v1.Descriptor) []v1.Descriptor { return append(listed, gone) })
	got, err := (&signature.KeyVerifier{Keys: keys}).Verify(ctx, h.loc, d)
	if err != nil || got.Referrer != real.Descriptor.Digest.String() {
		t.Fatalf("verified %+v, %v; want the real bundle %s behind the gone one", got, err, real.Descriptor.Digest)
	}
	// Gone alone: a bad signature that names it, not an error of the
	// registry's.
	h.set(func([]v1.Descriptor) []v1.Descriptor { return []v1.Descriptor{gone} })
	_, err = (&signature.KeyVerifier{Keys: keys}).Verify(ctx, h.loc, d)
	if !errors.Is(err, signature.ErrBadSignature) || !strings.Contains(err.Error(), gone.Digest.String()) {
		t.Errorf("err = %v, want ErrBadSignature naming %s", err, gone.Digest)
	}
}

// The search's byte bound counts what it reads: the referrer manifests as
// well as their bundles. Manifests of junk annotations (a megabyte each,
// under the manifest cap) were read without count: 256 of them at the
// registry's 16 MiB manifest cap are 4 GiB read to verify one add-on.
func TestVerifyBundleSearchCountsManifests(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			d := putImage(t, loc, "fat")
			m, err := loc.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			forged := forgeries(t, d, good, other)[0]
			const n = 8
			for i := range n {
				fat := junkReferrer(t, forged, m.Descriptor, i)
				raw, err := fat.Image.RawManifest()
				if err != nil {
					t.Fatal(err)
				}
				var man map[string]any
				if err := json.Unmarshal(raw, &man); err != nil {
					t.Fatal(err)
				}
				man["annotations"] = map[string]string{"junk": fmt.Sprint(i), "pad": strings.Repeat("x", 1<<20)}
				raw, err = json.Marshal(man)
				if err != nil {
					t.Fatal(err)
				}
				bd, _, _ := v1.SHA256(bytes.NewReader(forged))
				if err := loc.Write(ctx, bundleManifest(t, raw, forged, bd), ""); err != nil {
					t.Fatal(err)
				}
			}
			_, err = (&signature.KeyVerifier{Keys: keys, Limits: safetree.Limits{MaxBundleSearchBytes: 4 << 20}}).Verify(ctx, loc, d)
			var search *signature.BundleSearchError
			if !errors.As(err, &search) || search.Bound.Which != safetree.LimitBundleSearchBytes || search.Checked > 4 {
				t.Fatalf("err = %v; want the search stopped at 4 MiB, after at most 4 manifests of a MiB", err)
			}
			t.Logf("%v", err)
		})
	}
}
