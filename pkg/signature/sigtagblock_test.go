package signature_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// Anyone who can push a tag could push a sha256-HEX.sig image of more
// than MaxSignatures layers beside a correctly signed add-on: Verify
// failed on it before it read the Sigstore bundles, and the add-on's
// good bundle was never looked at. The tag over its cap is a reason,
// not the verdict: the bundles are still read, and an add-on with
// neither verifies not.
func TestVerifyBundleDespiteOversizedSigTag(t *testing.T) {
	ctx := context.Background()
	good := newKeyPair(t, "good")
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			junkTag := func(tag string) {
				img, err := random.Image(16, signature.MaxSignatures+1)
				if err != nil {
					t.Fatal(err)
				}
				desc, err := partial.Descriptor(img)
				if err != nil {
					t.Fatal(err)
				}
				if err := loc.Write(ctx, &referrers.Manifest{Descriptor: *desc, Image: img}, tag); err != nil {
					t.Fatal(err)
				}
			}
			signed := putImage(t, loc, "signed")
			m, err := loc.Open(ctx, signed)
			if err != nil {
				t.Fatal(err)
			}
			st := statement(signed.Hex, mediatypes.CosignSignPredicateType)
			if err := loc.Write(ctx, newBundleImage(t, cosign3Bundle(t, good.signer, st), m.Descriptor, mediatypes.CosignSignPredicateType), ""); err != nil {
				t.Fatal(err)
			}
			junkTag(signature.Tag(signed))
			got, err := (&signature.KeyVerifier{Keys: []signature.Key{good.public}}).Verify(ctx, loc, signed)
			if err != nil {
				t.Fatalf("Verify: %v, want the bundle verified", err)
			}
			if got.Referrer == "" || got.Key != "good.pub" {
				t.Errorf("verified by %+v, want the bundle, by good.pub", got)
			}

			unsigned := putImage(t, loc, "unsigned")
			junkTag(signature.Tag(unsigned))
			if _, err := (&signature.KeyVerifier{Keys: []signature.Key{good.public}}).Verify(ctx, loc, unsigned); !errors.Is(err, signature.ErrBadSignature) {
				t.Fatalf("Verify of an add-on with only the oversized tag: %v, want ErrBadSignature", err)
			}
		})
	}
}
