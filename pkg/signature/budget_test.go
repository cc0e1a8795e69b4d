package signature_test

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// legacyBytes is what reading the legacy signature image of d costs:
// its manifest and the first n payloads.
func legacyBytes(t *testing.T, loc referrers.Location, d v1.Hash, n int) int64 {
	t.Helper()
	ctx := context.Background()
	desc, err := loc.Resolve(ctx, signature.Tag(d))
	if err != nil {
		t.Fatal(err)
	}
	m, err := loc.Open(ctx, desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	man, err := m.Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	spent := m.Descriptor.Size
	for _, l := range man.Layers[:n] {
		spent += l.Size
	}
	return spent
}

// One byte budget bounds every signature byte one Verify reads
// (safetree.Limits.MaxBundleSearchBytes): the legacy sha256-HEX.sig image
// and its payloads (up to MaxSignatures of MaxSignatureBytes each, 64 MiB
// by default) count as the Sigstore bundle search does, and what they
// spent is not spent again by the search. Past it, Verify fails with a
// reason that unwraps to the bound's *safetree.LimitError. Each case is
// checked at the budget it needs (verified) and one byte under it.
func TestVerifyOneSignatureByteBudget(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	keys := []signature.Key{good.public}
	verify := func(loc referrers.Location, d v1.Hash, budget int64) (*signature.Verified, error) {
		return (&signature.KeyVerifier{Keys: keys, Limits: safetree.Limits{MaxBundleSearchBytes: budget}}).Verify(ctx, loc, d)
	}
	wantBound := func(t *testing.T, got *signature.Verified, err error) {
		t.Helper()
		var le *safetree.LimitError
		if got != nil || !errors.Is(err, signature.ErrBadSignature) || !errors.As(err, &le) || le.Which != safetree.LimitBundleSearchBytes {
			t.Fatalf("verified %+v, %v; want ErrBadSignature over the %s bound", got, err, safetree.LimitBundleSearchBytes)
		}
		t.Logf("%v", err)
	}
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			t.Run("legacy payloads", func(t *testing.T) {
				// Three payloads by another key, then the good one.
				d := putImage(t, loc, "budget-legacy")
				for _, s := range []keyPair{other, other, other, good} {
					if _, err := signature.Sign(ctx, loc, d, s.signer, signature.SignOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				all := legacyBytes(t, loc, d, 4)
				got, err := verify(loc, d, all-1)
				wantBound(t, got, err)
				if got, err := verify(loc, d, all); err != nil || got.Tag == "" {
					t.Fatalf("verified %+v, %v; want the legacy signature within %d bytes", got, err, all)
				}
			})
			t.Run("legacy then bundle", func(t *testing.T) {
				// A legacy payload by another key, then a good bundle.
				d := putImage(t, loc, "budget-shared")
				if _, err := signature.Sign(ctx, loc, d, other.signer, signature.SignOptions{}); err != nil {
					t.Fatal(err)
				}
				m, err := loc.Open(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				bundle := newBundleImage(t, cosign3Bundle(t, good.signer, statement(d.Hex, mediatypes.CosignSignPredicateType)), m.Descriptor, mediatypes.CosignSignPredicateType)
				if err := loc.Write(ctx, bundle, ""); err != nil {
					t.Fatal(err)
				}
				bman, err := bundle.Image.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				all := legacyBytes(t, loc, d, 1) + bundle.Descriptor.Size + bman.Layers[0].Size
				got, err := verify(loc, d, all-1)
				wantBound(t, got, err)
				var search *signature.BundleSearchError
				if !errors.As(err, &search) || search.Checked != 0 || search.Unread != 1 {
					t.Errorf("err = %v, want a *BundleSearchError that checked none of one", err)
				}
				if got, err := verify(loc, d, all); err != nil || got.Referrer == "" {
					t.Fatalf("verified %+v, %v; want the bundle within %d bytes", got, err, all)
				}
			})
		})
	}
}
