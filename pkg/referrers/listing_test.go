package referrers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// listingServer is a registry with the referrers API whose listing of
// any subject is body.
func listingServer(t *testing.T, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/referrers/") {
			return // GET /v2/: no auth
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// listing is an index of n referrers, each entry padded with an
// annotation of pad bytes.
func listing(t *testing.T, n, pad int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":2,"digest":"sha256:%064x","artifactType":"application/vnd.dev.sigstore.bundle.v0.3+json","annotations":{"p":%q}}`, i, strings.Repeat("x", pad))
	}
	b.WriteString(`]}`)
	if !json.Valid(b.Bytes()) {
		t.Fatal("the listing is not JSON")
	}
	return b.Bytes()
}

// A listing of referrers is read under two bounds, whoever serves it: its
// bytes (safetree's index cap, before it is decoded) and its entries
// (safetree.MaxIndexManifests). Past either, Referrers fails with a typed error that
// names the counts (a *ListingError wrapping ErrTooMany, or the cap's
// *safetree.LimitError), not a listing to search.
func TestReferrersListingBounded(t *testing.T) {
	subject := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	for _, c := range []struct {
		name  string
		body  []byte
		check func(t *testing.T, ds []v1.Descriptor, err error)
	}{
		{"at the count", listing(t, safetree.MaxIndexManifests, 0), func(t *testing.T, ds []v1.Descriptor, err error) {
			if err != nil || len(ds) != safetree.MaxIndexManifests {
				t.Errorf("%d referrers, %v; want %d", len(ds), err, safetree.MaxIndexManifests)
			}
		}},
		{"over the count", listing(t, safetree.MaxIndexManifests+1, 0), func(t *testing.T, ds []v1.Descriptor, err error) {
			var le *referrers.ListingError
			if !errors.As(err, &le) || !errors.Is(err, referrers.ErrTooMany) || le.Listed != safetree.MaxIndexManifests+1 || le.Max != safetree.MaxIndexManifests {
				t.Fatalf("%d referrers, %v; want a *ListingError of %d over %d", len(ds), err, safetree.MaxIndexManifests+1, safetree.MaxIndexManifests)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%d referrers listed, over %d", safetree.MaxIndexManifests+1, safetree.MaxIndexManifests)) {
				t.Errorf("message %q does not name the counts", msg)
			}
		}},
		{"over the bytes", listing(t, 20, 1<<20), func(t *testing.T, ds []v1.Descriptor, err error) {
			var le *safetree.LimitError
			if !errors.As(err, &le) || le.Which != safetree.LimitIndexBytes {
				t.Errorf("%d referrers, %v; want the index cap's *safetree.LimitError", len(ds), err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			host := listingServer(t, c.body)
			// Both constructors of a registry Location: the cap belongs to
			// the Location, not to how its caller reached the registry.
			beside, err := referrers.Beside(t.Context(), nil, "", host+"/x:1", registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			repo, err := name.NewRepository(host + "/x")
			if err != nil {
				t.Fatal(err)
			}
			reg, err := referrers.Registry(repo, registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, loc := range []referrers.Location{beside, reg} {
				ds, err := loc.Referrers(t.Context(), subject)
				c.check(t, ds, err)
			}
		})
	}
}
