package signature_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// statement is the in-toto statement cosign 3 sign signs: its subject is
// the manifest digest, its predicate type cosign sign's.
func statement(subjectHex, predicateType string) []byte {
	return fmt.Appendf(nil, `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":%q}}],"predicateType":%q,"predicate":{}}`, subjectHex, predicateType)
}

// cosign3Bundle is the Sigstore bundle cosign 3 sign --key
// --tlog-upload=false writes (sign.go signDigestBundle): a DSSE envelope
// of the statement, signed over its PAE, a public key hint, no log entry.
func cosign3Bundle(t *testing.T, signer sigsig.Signer, stmt []byte) []byte {
	t.Helper()
	sig, err := signer.SignMessage(bytes.NewReader(signature.PAE(signature.InTotoPayloadType, stmt)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"mediaType":            string(mediatypes.SigstoreBundle),
		"verificationMaterial": map[string]any{"publicKey": map[string]any{"hint": "aGludA=="}},
		"dsseEnvelope": map[string]any{
			"payload":     base64.StdEncoding.EncodeToString(stmt),
			"payloadType": signature.InTotoPayloadType,
			"signatures":  []any{map[string]any{"sig": base64.StdEncoding.EncodeToString(sig)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bundleImage is the referrer cosign 3 pushes for a bundle
// (pkg/oci/remote WriteReferrer): an empty config, the bundle as the one
// layer, titled, the predicate type annotated, subject the signed manifest.
type bundleImage struct {
	manifest, bundle []byte
	bundleDigest     v1.Hash
}

var emptyJSON = []byte("{}")

func newBundleImage(t *testing.T, bundle []byte, subject v1.Descriptor, predicateType string) *referrers.Manifest {
	t.Helper()
	bd, _, _ := v1.SHA256(bytes.NewReader(bundle))
	ed, _, _ := v1.SHA256(bytes.NewReader(emptyJSON))
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(mediatypes.SigstoreBundle),
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Size: 2, Digest: ed},
		Layers: []v1.Descriptor{{MediaType: types.MediaType(mediatypes.SigstoreBundle), Size: int64(len(bundle)), Digest: bd,
			Annotations: map[string]string{mediatypes.AnnotationTitle: "sha256-" + bd.Hex + ".sigstore.json"}}},
		Subject:     &v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
		Annotations: map[string]string{mediatypes.AnnotationBundlePredicateType: predicateType, "dev.sigstore.bundle.content": "dsse-envelope"},
	}
	raw, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return bundleManifest(t, raw, bundle, bd)
}

// bundleManifest is the referrer whose manifest is raw and whose one
// layer is bundle (of digest bd).
func bundleManifest(t *testing.T, raw, bundle []byte, bd v1.Hash) *referrers.Manifest {
	t.Helper()
	img, err := partial.CompressedToImage(&bundleImage{manifest: raw, bundle: bundle, bundleDigest: bd})
	if err != nil {
		t.Fatal(err)
	}
	d, err := partial.Descriptor(img)
	if err != nil {
		t.Fatal(err)
	}
	return &referrers.Manifest{Descriptor: *d, Image: img}
}

func (b *bundleImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (b *bundleImage) RawManifest() ([]byte, error)        { return b.manifest, nil }
func (b *bundleImage) RawConfigFile() ([]byte, error)      { return emptyJSON, nil }
func (b *bundleImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == b.bundleDigest {
		return static.NewLayer(b.bundle, mediatypes.SigstoreBundle), nil
	}
	return static.NewLayer(emptyJSON, mediatypes.OCIEmpty), nil
}

// bundleLocations are where a cosign 3 bundle is found: a registry with
// the referrers API, one without it (the sha256-HEX fallback index), and
// an OCI layout.
func bundleLocations(t *testing.T) map[string]referrers.Location {
	t.Helper()
	locs := locations(t)
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)), ggcrregistry.WithReferrersSupport(false)))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	locs["registry without referrers API"] = registryAt(t, repo)
	// go-containerregistry's registry lists a referrer's config media type
	// (cosign's empty config) as its artifactType.
	api := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)), ggcrregistry.WithReferrersSupport(true)))
	t.Cleanup(api.Close)
	apiRepo, err := name.NewRepository(strings.TrimPrefix(api.URL, "http://") + "/addons/demo")
	if err != nil {
		t.Fatal(err)
	}
	locs["registry with referrers API"] = registryAt(t, apiRepo)
	return locs
}

// TestVerifyCosign3Bundle: what cosign 3 sign --key writes by default (a
// Sigstore bundle referring to the add-on) verifies with the key, found
// by the referrers API, the fallback index or a layout's subject; and
// keeps the legacy guarantees: only the given keys, the digest bound
// exactly, an attestation is not a signature, an oversized bundle is
// refused under the signature cap. Without bundle support every case
// was ErrNoSignature.
func TestVerifyCosign3Bundle(t *testing.T) {
	ctx := context.Background()
	good, other := newKeyPair(t, "good"), newKeyPair(t, "other")
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			attach := func(tag string, bundle []byte, predicateType string) v1.Hash {
				d := putImage(t, loc, tag)
				m, err := loc.Open(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				if err := loc.Write(ctx, newBundleImage(t, bundle, m.Descriptor, predicateType), ""); err != nil {
					t.Fatal(err)
				}
				return d
			}
			signedBy := func(signer sigsig.Signer, stmt func(hex string) []byte, predicateType string, tag string) v1.Hash {
				// The statement names the digest the image gets: sign
				// after the image is there.
				d := putImage(t, loc, tag)
				m, err := loc.Open(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				if err := loc.Write(ctx, newBundleImage(t, cosign3Bundle(t, signer, stmt(d.Hex)), m.Descriptor, predicateType), ""); err != nil {
					t.Fatal(err)
				}
				return d
			}
			sign := func(hex string) []byte { return statement(hex, mediatypes.CosignSignPredicateType) }
			signed := signedBy(good.signer, sign, mediatypes.CosignSignPredicateType, "signed")
			byOther := signedBy(other.signer, sign, mediatypes.CosignSignPredicateType, "by-other")
			attested := signedBy(good.signer, func(hex string) []byte { return statement(hex, "https://slsa.dev/provenance/v1") }, "https://slsa.dev/provenance/v1", "attested")
			// A bundle signing another manifest, attached to this one.
			tampered := attach("tampered", cosign3Bundle(t, good.signer, sign(strings.Repeat("0", 64))), mediatypes.CosignSignPredicateType)
			huge := attach("huge", bytes.Repeat([]byte(" "), int(safetree.DefaultMaxSignatureBytes)+1), mediatypes.CosignSignPredicateType)
			garbage := attach("garbage", []byte(`{"dsseEnvelope":`), mediatypes.CosignSignPredicateType)
			unsigned := putImage(t, loc, "unsigned")

			for _, tt := range []struct {
				name    string
				d       v1.Hash
				keys    []signature.Key
				wantKey string
				wantErr error
			}{
				{"signed", signed, []signature.Key{good.public}, "good.pub", nil},
				{"any key suffices", signed, []signature.Key{other.public, good.public}, "good.pub", nil},
				{"another key", signed, []signature.Key{other.public}, "", signature.ErrBadSignature},
				{"signed by another key", byOther, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"an attestation", attested, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"signs another digest", tampered, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"over the cap", huge, []signature.Key{good.public}, "", safetree.ErrLimit},
				{"not a bundle", garbage, []signature.Key{good.public}, "", signature.ErrBadSignature},
				{"unsigned", unsigned, []signature.Key{good.public}, "", signature.ErrNoSignature},
			} {
				t.Run(tt.name, func(t *testing.T) {
					got, err := (&signature.KeyVerifier{Keys: tt.keys}).Verify(ctx, loc, tt.d)
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("err = %v, want %v", err, tt.wantErr)
					}
					if err != nil {
						t.Logf("%v", err)
						if tt.wantErr == safetree.ErrLimit && !errors.Is(err, signature.ErrBadSignature) {
							t.Errorf("an oversized bundle: %v, want ErrBadSignature too", err)
						}
						return
					}
					if got.Key != tt.wantKey || got.Digest != tt.d.String() || got.Referrer == "" || got.Tag != "" {
						t.Errorf("verified %+v, want key %s, digest %s, a referrer and no tag", got, tt.wantKey, tt.d)
					}
				})
			}
		})
	}
}
