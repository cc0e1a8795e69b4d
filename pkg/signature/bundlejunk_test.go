package signature_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// junkReferrer is the n-th of many bundle referrers of subject that
// share one bundle body: each manifest differs by an annotation only, so
// its digest is new while the store holds the body once.
func junkReferrer(t *testing.T, bundle []byte, subject v1.Descriptor, n int) *referrers.Manifest {
	t.Helper()
	bd, _, _ := v1.SHA256(bytes.NewReader(bundle))
	ed, _, _ := v1.SHA256(bytes.NewReader(emptyJSON))
	raw, err := json.Marshal(&v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(mediatypes.SigstoreBundle),
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Size: 2, Digest: ed},
		Layers:        []v1.Descriptor{{MediaType: types.MediaType(mediatypes.SigstoreBundle), Size: int64(len(bundle)), Digest: bd}},
		Subject:       &v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
		Annotations:   map[string]string{"junk": fmt.Sprint(n)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return bundleManifest(t, raw, bundle, bd)
}

// forgeries are bundles about d that must never verify with good's key:
// made by another key, by the key about another manifest, and an
// attestation by the key.
func forgeries(t *testing.T, d v1.Hash, good, other keyPair) [][]byte {
	return [][]byte{
		cosign3Bundle(t, other.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)),
		cosign3Bundle(t, good.signer, statement(strings.Repeat("0", 64), mediatypes.CosignSignPredicateType)),
		cosign3Bundle(t, good.signer, statement(d.Hex, "https://slsa.dev/provenance/v1")),
	}
}

// junkBefore pushes count junk referrers of d (forged bundles, under
// subject) whose digests sort before the real bundle it returns, a good
// bundle of d not yet pushed. The real one is made to sort in the upper
// half, so that junk sorting before it is quick to make.
func junkBefore(t *testing.T, loc referrers.Location, d v1.Hash, subject v1.Descriptor, good, other keyPair, count int) *referrers.Manifest {
	t.Helper()
	var real *referrers.Manifest
	for real == nil || real.Descriptor.Digest.Hex < "8" {
		real = newBundleImage(t, cosign3Bundle(t, good.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)), subject, mediatypes.CosignSignPredicateType)
	}
	forged := forgeries(t, d, good, other)
	for n, pushed := 0, 0; pushed < count; n++ {
		j := junkReferrer(t, forged[n%len(forged)], subject, n)
		if j.Descriptor.Digest.Hex > real.Descriptor.Digest.Hex {
			continue
		}
		if err := loc.Write(context.Background(), j, ""); err != nil {
			t.Fatal(err)
		}
		pushed++
	}
	return real
}

// Anyone who can push a referrer could push MaxSignatures junk bundles
// whose digests sort before the real one: Verify read the first 64 in
// digest order, then checked them, and a correctly signed add-on failed
// with ErrBadSignature. Each candidate is now checked as it is read and
// the first that verifies wins; forged bundles among many never do.
func TestVerifyBundleBehindJunk(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			d := putImage(t, loc, "signed")
			m, err := loc.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			real := junkBefore(t, loc, d, m.Descriptor, good, other, signature.MaxSignatures+1)
			// Forgeries alone, however many, are refused.
			_, err = (&signature.KeyVerifier{Keys: keys}).Verify(ctx, loc, d)
			var search *signature.BundleSearchError
			if !errors.Is(err, signature.ErrBadSignature) || errors.As(err, &search) {
				t.Fatalf("Verify of forgeries only: %v, want ErrBadSignature, the search not bounded", err)
			}
			if err := loc.Write(ctx, real, ""); err != nil {
				t.Fatal(err)
			}
			got, err := (&signature.KeyVerifier{Keys: keys}).Verify(ctx, loc, d)
			if err != nil {
				t.Fatalf("Verify: %v, want the real bundle behind %d junk ones verified", err, signature.MaxSignatures+1)
			}
			if got.Referrer != real.Descriptor.Digest.String() || got.Key != "good.pub" || got.Digest != d.String() {
				t.Errorf("verified %+v, want %s by good.pub over %s", got, real.Descriptor.Digest, d)
			}
		})
	}
}

// The search is bounded by its work: KeyVerifier.Limits'
// MaxBundleReferrers referrers read, MaxBundleSearchBytes of bundle
// bodies (safetree's defaults when unset). Past either bound Verify
// fails closed with a *BundleSearchError under ErrBadSignature that
// counts the candidates checked and those left unread, for an operator
// to clean the repository, and unwraps to the *safetree.LimitError of
// the bound (the command line names its flag from it).
func TestVerifyBundleSearchBound(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	// 64 KiB bodies that are no bundle: each is read, and spent, with
	// its manifest (under a KiB: the budget leaves 4 KiB for them).
	junkBody := bytes.Repeat([]byte(" "), 64<<10)
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			for _, c := range []struct {
				name        string
				limits      safetree.Limits
				junk        func(d v1.Hash) [][]byte
				n           int
				wantChecked int
				which       safetree.LimitID
			}{
				{name: "default referrers", junk: func(d v1.Hash) [][]byte { return forgeries(t, d, good, other) },
					n: safetree.DefaultMaxBundleReferrers + 3, wantChecked: safetree.DefaultMaxBundleReferrers, which: safetree.LimitBundleReferrers},
				{name: "referrers", limits: safetree.Limits{MaxBundleReferrers: 8}, junk: func(d v1.Hash) [][]byte { return forgeries(t, d, good, other) },
					n: 11, wantChecked: 8, which: safetree.LimitBundleReferrers},
				{name: "bytes", limits: safetree.Limits{MaxBundleSearchBytes: 4*64<<10 + 4<<10}, junk: func(v1.Hash) [][]byte { return [][]byte{junkBody} },
					n: 6, wantChecked: 4, which: safetree.LimitBundleSearchBytes},
			} {
				t.Run(c.name, func(t *testing.T) {
					d := putImage(t, loc, "junk-"+strings.ReplaceAll(c.name, " ", "-"))
					m, err := loc.Open(ctx, d)
					if err != nil {
						t.Fatal(err)
					}
					junk := c.junk(d)
					for n := range c.n {
						if err := loc.Write(ctx, junkReferrer(t, junk[n%len(junk)], m.Descriptor, n), ""); err != nil {
							t.Fatal(err)
						}
					}
					got, err := (&signature.KeyVerifier{Keys: keys, Limits: c.limits}).Verify(ctx, loc, d)
					if got != nil || !errors.Is(err, signature.ErrBadSignature) {
						t.Fatalf("verified %+v, %v; want ErrBadSignature", got, err)
					}
					var search *signature.BundleSearchError
					if !errors.As(err, &search) {
						t.Fatalf("err = %v, want a *BundleSearchError", err)
					}
					if search.Checked != c.wantChecked || search.Unread != c.n-c.wantChecked {
						t.Errorf("checked %d, unread %d; want %d, %d", search.Checked, search.Unread, c.wantChecked, c.n-c.wantChecked)
					}
					var le *safetree.LimitError
					if !errors.As(err, &le) || le.Which != c.which || !errors.Is(err, safetree.ErrLimit) {
						t.Errorf("err = %v, want it to unwrap to the %s limit", err, c.which)
					}
					// The message stays readable and ends with the counts,
					// however many junk referrers there are.
					if msg := err.Error(); len(msg) > 4096 || !strings.HasSuffix(msg, search.Error()) {
						t.Errorf("a message of %d bytes, want at most 4096 ending with %q", len(msg), search)
					}
					t.Logf("%v", err)
				})
			}
		})
	}
}

// A repository busy with referrers of one add-on raises the bound: the
// real bundle behind eight junk ones is past a bound of eight, and found
// under a bound of nine.
func TestVerifyBundleSearchBoundRaised(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			d := putImage(t, loc, "busy")
			m, err := loc.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			real := junkBefore(t, loc, d, m.Descriptor, good, other, 8)
			if err := loc.Write(ctx, real, ""); err != nil {
				t.Fatal(err)
			}
			_, err = (&signature.KeyVerifier{Keys: keys, Limits: safetree.Limits{MaxBundleReferrers: 8}}).Verify(ctx, loc, d)
			var search *signature.BundleSearchError
			if !errors.As(err, &search) || search.Checked != 8 || search.Unread != 1 {
				t.Fatalf("Verify under a bound of 8: %v, want the search stopped with the real bundle unread", err)
			}
			got, err := (&signature.KeyVerifier{Keys: keys, Limits: safetree.Limits{MaxBundleReferrers: 9}}).Verify(ctx, loc, d)
			if err != nil || got.Referrer != real.Descriptor.Digest.String() {
				t.Fatalf("Verify under a bound of 9: %+v, %v; want the real bundle %s", got, err, real.Descriptor.Digest)
			}
		})
	}
}
