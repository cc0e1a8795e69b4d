package signature

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
)

// FuzzCheck feeds hostile signature layers (payload bytes and the
// signature annotation) to the check of one layer: it must not panic, and
// it accepts only a payload naming the digest whose signature the key
// verifies. The key's own signature of a good payload is accepted.
func FuzzCheck(f *testing.F) {
	pk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	sv, err := sigsig.LoadSignerVerifier(pk, crypto.SHA256)
	if err != nil {
		f.Fatal(err)
	}
	v := &KeyVerifier{Keys: []Key{{Name: "fuzz.pub", Verifier: sv}}}
	d := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	sign := func(body []byte) string {
		sig, err := sv.SignMessage(bytes.NewReader(body))
		if err != nil {
			f.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig)
	}
	good, err := Payload(d, "registry.example/addons/x", nil)
	if err != nil {
		f.Fatal(err)
	}
	goodSig := sign(good)
	other, _ := Payload(v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("cd", 32)}, "registry.example/addons/x", nil)
	notJSON := []byte("not json")
	wrongType := []byte(`{"critical":{"identity":{"docker-reference":""},"image":{"docker-manifest-digest":"sha256:` + d.Hex + `"},"type":"atomic container signature"},"optional":null}`)
	f.Add(good, goodSig)
	f.Add(other, sign(other))
	f.Add(notJSON, sign(notJSON))
	f.Add(wrongType, sign(wrongType))
	f.Add(good, "")
	f.Add(good, "!!!")
	f.Add([]byte{}, goodSig)
	f.Fuzz(func(t *testing.T, body []byte, sigB64 string) {
		p, _, err := v.check(body, sigB64, d)
		if bytes.Equal(body, good) && sigB64 == goodSig && err != nil {
			t.Fatalf("the key's own signature of a good payload refused: %v", err)
		}
		if err != nil {
			return
		}
		if p.Critical.Image.DockerManifestDigest != d.String() {
			t.Fatalf("accepted a payload naming %s", p.Critical.Image.DockerManifestDigest)
		}
		sig, _ := base64.StdEncoding.DecodeString(sigB64)
		if err := sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)); err != nil {
			t.Fatalf("accepted a signature the key does not verify: %v", err)
		}
	})
}

// FuzzCheckBundle feeds hostile Sigstore bundles (cosign 3's signature
// form) to the check of one bundle: it must not panic, and it accepts only
// a DSSE envelope the key signed of cosign sign's statement naming the
// digest. The key's own bundle is accepted.
func FuzzCheckBundle(f *testing.F) {
	pk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	sv, err := sigsig.LoadSignerVerifier(pk, crypto.SHA256)
	if err != nil {
		f.Fatal(err)
	}
	v := &KeyVerifier{Keys: []Key{{Name: "fuzz.pub", Verifier: sv}}}
	d := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	bundle := func(stmt string) []byte {
		sig, err := sv.SignMessage(bytes.NewReader(PAE(InTotoPayloadType, []byte(stmt))))
		if err != nil {
			f.Fatal(err)
		}
		return []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":""}},` +
			`"dsseEnvelope":{"payload":"` + base64.StdEncoding.EncodeToString([]byte(stmt)) + `","payloadType":"` + InTotoPayloadType +
			`","signatures":[{"sig":"` + base64.StdEncoding.EncodeToString(sig) + `"}]}}`)
	}
	stmt := func(hex, predicate string) string {
		return `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"` + hex + `"}}],"predicateType":"` + predicate + `","predicate":{}}`
	}
	good := bundle(stmt(d.Hex, "https://sigstore.dev/cosign/sign/v1"))
	f.Add(good)
	f.Add(bundle(stmt(strings.Repeat("cd", 32), "https://sigstore.dev/cosign/sign/v1")))
	f.Add(bundle(stmt(d.Hex, "https://slsa.dev/provenance/v1")))
	f.Add(bundle("not json"))
	f.Add([]byte(`{"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":""},"signature":""}}`))
	f.Add([]byte(`{"dsseEnvelope":{"signatures":[{}]}}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := v.checkBundle(body, d)
		if bytes.Equal(body, good) && err != nil {
			t.Fatalf("the key's own bundle refused: %v", err)
		}
		if err != nil {
			return
		}
		if !bytes.Contains(body, []byte("dsseEnvelope")) && !bytes.Contains(body, []byte("dsse_envelope")) {
			t.Fatalf("accepted a bundle without a DSSE envelope: %s", body)
		}
	})
}
