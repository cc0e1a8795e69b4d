package signature_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

// keylessSigner is what cosign 3 sign without --key signs with: a key of
// its own, for which Fulcio issued a short-lived certificate naming the
// signer (here self-made: only its shape matters).
func keylessSigner(t *testing.T) (sigsig.Signer, []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:   big.NewInt(1),
		Subject:        pkix.Name{CommonName: "sigstore"},
		NotBefore:      time.Now().Add(-time.Minute),
		NotAfter:       time.Now().Add(10 * time.Minute),
		EmailAddresses: []string{"alice@example.com"},
		KeyUsage:       x509.KeyUsageDigitalSignature,
		ExtKeyUsage:    []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sigsig.LoadECDSASigner(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return s, der
}

// dsse is a bundle of a DSSE envelope of payload, typed payloadType,
// with sigs, and the verification material vm.
func dsse(t *testing.T, payloadType string, payload []byte, vm map[string]any, sigs ...[]byte) []byte {
	t.Helper()
	var ss []any
	for _, s := range sigs {
		ss = append(ss, map[string]any{"sig": base64.StdEncoding.EncodeToString(s)})
	}
	b, err := json.Marshal(map[string]any{
		"mediaType":            string(mediatypes.SigstoreBundle),
		"verificationMaterial": vm,
		"dsseEnvelope":         map[string]any{"payload": base64.StdEncoding.EncodeToString(payload), "payloadType": payloadType, "signatures": ss},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func signBytes(t *testing.T, s sigsig.Signer, b []byte) []byte {
	t.Helper()
	sig, err := s.SignMessage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// bundleReferrer is newBundleImage with the manifest's artifactType and
// its layer's media type chosen.
func bundleReferrer(t *testing.T, bundle []byte, subject v1.Descriptor, artifactType string, layerMT types.MediaType) *referrers.Manifest {
	t.Helper()
	bd, _, _ := v1.SHA256(bytes.NewReader(bundle))
	ed, _, _ := v1.SHA256(bytes.NewReader(emptyJSON))
	raw, err := json.Marshal(&v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  artifactType,
		Config:        v1.Descriptor{MediaType: mediatypes.OCIEmpty, Size: 2, Digest: ed},
		Layers:        []v1.Descriptor{{MediaType: layerMT, Size: int64(len(bundle)), Digest: bd}},
		Subject:       &v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
	})
	if err != nil {
		t.Fatal(err)
	}
	return bundleManifest(t, raw, bundle, bd)
}

// Sigstore bundles made the way another tool or an attacker makes them:
// none verifies but a DSSE signature by the given key, over the PAE of
// an in-toto statement of cosign sign's predicate type about this exact
// manifest. A keylessly signed bundle (a Fulcio certificate as its
// verification material, what cosign 3 sign writes without --key) said
// only "not made by the key good.pub", as if the key were wrong; it is
// ErrKeyless, naming the certificate's identity, under ErrBadSignature.
func TestVerifyHostileBundles(t *testing.T) {
	ctx := context.Background()
	good := newKeyPair(t, "good")
	keyless, cert := keylessSigner(t)
	pub := map[string]any{"publicKey": map[string]any{"hint": "aGludA=="}}
	certVM := map[string]any{"certificate": map[string]any{"rawBytes": base64.StdEncoding.EncodeToString(cert)}}
	chainVM := map[string]any{"x509CertificateChain": map[string]any{"certificates": []any{map[string]any{"rawBytes": base64.StdEncoding.EncodeToString(cert)}}}}
	bundleMT := types.MediaType(mediatypes.SigstoreBundle)
	for locName, loc := range bundleLocations(t) {
		t.Run(locName, func(t *testing.T) {
			for _, c := range []struct {
				name string
				// bundle makes the bundle for the manifest d.
				bundle       func(d v1.Hash) []byte
				artifactType string
				layerMT      types.MediaType
				want         []error
			}{
				{name: "duplicate signatures", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					sig := signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st))
					return dsse(t, signature.InTotoPayloadType, st, pub, sig, sig)
				}},
				{name: "more signatures than MaxSignatures, the good one last", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					sigs := make([][]byte, signature.MaxSignatures, signature.MaxSignatures+1)
					for i := range sigs {
						sigs[i] = []byte("junk")
					}
					sigs = append(sigs, signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st)))
					return dsse(t, signature.InTotoPayloadType, st, pub, sigs...)
				}, want: []error{signature.ErrBadSignature}},
				{name: "the digest under another algorithm's name", bundle: func(d v1.Hash) []byte {
					st := fmt.Appendf(nil, `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha512":%q}}],"predicateType":%q,"predicate":{}}`, d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, pub, signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st)))
				}, want: []error{signature.ErrBadSignature}},
				{name: "the digest in upper case", bundle: func(d v1.Hash) []byte {
					st := statement(strings.ToUpper(d.Hex), mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, pub, signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st)))
				}, want: []error{signature.ErrBadSignature}},
				{name: "payload type not in-toto", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, "application/json", st, pub, signBytes(t, good.signer, signature.PAE("application/json", st)))
				}, want: []error{signature.ErrBadSignature}},
				{name: "signature over the payload, not its PAE", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, pub, signBytes(t, good.signer, st))
				}, want: []error{signature.ErrBadSignature}},
				{name: "message signature over the digest", bundle: func(d v1.Hash) []byte {
					raw, _ := v1.NewHash(d.String())
					sum := sha256.Sum256([]byte(raw.Hex))
					b, _ := json.Marshal(map[string]any{
						"mediaType":            string(mediatypes.SigstoreBundle),
						"verificationMaterial": pub,
						"messageSignature": map[string]any{
							"messageDigest": map[string]any{"algorithm": "SHA2_256", "digest": base64.StdEncoding.EncodeToString(sum[:])},
							"signature":     base64.StdEncoding.EncodeToString(signBytes(t, good.signer, []byte(raw.Hex))),
						},
					})
					return b
				}, want: []error{signature.ErrBadSignature}},
				{name: "keyless: a certificate", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, certVM, signBytes(t, keyless, signature.PAE(signature.InTotoPayloadType, st)))
				}, want: []error{signature.ErrBadSignature, signature.ErrKeyless}},
				{name: "keyless: a certificate chain", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, chainVM, signBytes(t, keyless, signature.PAE(signature.InTotoPayloadType, st)))
				}, want: []error{signature.ErrBadSignature, signature.ErrKeyless}},
				{name: "a bundle layer of another media type", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, pub, signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st)))
				}, layerMT: "application/octet-stream", want: []error{signature.ErrBadSignature}},
				{name: "an artifactType that is not a bundle's", bundle: func(d v1.Hash) []byte {
					st := statement(d.Hex, mediatypes.CosignSignPredicateType)
					return dsse(t, signature.InTotoPayloadType, st, pub, signBytes(t, good.signer, signature.PAE(signature.InTotoPayloadType, st)))
				}, artifactType: "application/spdx+json", want: []error{signature.ErrNoSignature}},
			} {
				t.Run(c.name, func(t *testing.T) {
					d := putImage(t, loc, "hostile")
					m, err := loc.Open(ctx, d)
					if err != nil {
						t.Fatal(err)
					}
					at, mt := c.artifactType, c.layerMT
					if at == "" {
						at = string(mediatypes.SigstoreBundle)
					}
					if mt == "" {
						mt = bundleMT
					}
					if err := loc.Write(ctx, bundleReferrer(t, c.bundle(d), m.Descriptor, at, mt), ""); err != nil {
						t.Fatal(err)
					}
					got, err := (&signature.KeyVerifier{Keys: []signature.Key{good.public}}).Verify(ctx, loc, d)
					if len(c.want) == 0 {
						if err != nil || got.Digest != d.String() || got.Key != "good.pub" {
							t.Fatalf("verified %+v, %v; want good.pub over %s", got, err, d)
						}
						return
					}
					if got != nil {
						t.Fatalf("verified %+v, want %v", got, c.want)
					}
					for _, w := range c.want {
						if !errors.Is(err, w) {
							t.Errorf("err = %v, want %v", err, w)
						}
					}
					t.Logf("%v", err)
				})
			}
		})
	}
}
