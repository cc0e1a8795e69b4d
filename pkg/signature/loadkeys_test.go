package signature_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/signature"
)

func TestLoadKeyVerifier(t *testing.T) {
	_, pub, err := signature.GenerateKeyPair(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pub"), filepath.Join(dir, "b.pub")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, pub, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := signature.LoadKeyVerifier(a, b)
	if err != nil || len(v.Keys) != 2 {
		t.Fatalf("LoadKeyVerifier: %v, %v", v, err)
	}
	if _, err := signature.LoadKeyVerifier(a, filepath.Join(dir, "missing.pub")); !errors.Is(err, signature.ErrBadKey) {
		t.Errorf("a missing key file: %v, want ErrBadKey", err)
	}
}

// A P-384 or P-521 key's signature is accepted over SHA-256 (cosign
// verify's default, and what addonpkg's signer makes) and over the hash
// sigstore pairs with the curve (what cosign 2.5 and later sign with);
// over any other hash, or by another key, it is not.
func TestLargerCurvesAcceptCosignsHashes(t *testing.T) {
	body := []byte(`{"critical":{"type":"cosign container image signature"}}`)
	for _, tc := range []struct {
		curve       elliptic.Curve
		paired, odd crypto.Hash
	}{
		{elliptic.P384(), crypto.SHA384, crypto.SHA512},
		{elliptic.P521(), crypto.SHA512, crypto.SHA384},
	} {
		t.Run(tc.curve.Params().Name, func(t *testing.T) {
			priv, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			other, err := ecdsa.GenerateKey(tc.curve, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
			if err != nil {
				t.Fatal(err)
			}
			k, err := signature.LoadPublicKey("k.pub", pemBytes)
			if err != nil {
				t.Fatal(err)
			}
			sign := func(key *ecdsa.PrivateKey, h crypto.Hash) []byte {
				s, err := sigsig.LoadECDSASignerVerifier(key, h)
				if err != nil {
					t.Fatal(err)
				}
				sig, err := s.SignMessage(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				return sig
			}
			for _, h := range []crypto.Hash{crypto.SHA256, tc.paired} {
				if err := k.Verify(sign(priv, h), body); err != nil {
					t.Errorf("signed over %s: %v", h, err)
				}
			}
			if k.Verify(sign(priv, tc.odd), body) == nil {
				t.Errorf("signed over %s: accepted", tc.odd)
			}
			if k.Verify(sign(other, tc.paired), body) == nil {
				t.Error("signed by another key: accepted")
			}
		})
	}
}

// A key file is read up to the cap of the short documents a user names:
// --key /dev/zero, or a large file named by mistake, is refused as an
// unusable key naming the file and the limit, not read without end.
func TestKeyFileCapped(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pub")
	if err := os.WriteFile(big, bytes.Repeat([]byte("A"), int(safetree.DefaultMaxDeclarationBytes)+1), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	for _, f := range files {
		load := map[string]func() error{
			"public":  func() error { _, err := signature.LoadPublicKeyFile(f); return err },
			"private": func() error { _, err := signature.LoadPrivateKeyFile(f); return err },
		}
		for kind, fn := range load {
			err := fn()
			var pe *fs.PathError
			var le *safetree.LimitError
			if !errors.Is(err, signature.ErrBadKey) || !errors.As(err, &le) || !errors.As(err, &pe) || pe.Path != f {
				t.Errorf("%s key %s: err = %v, want ErrBadKey, a *safetree.LimitError and the file named", kind, f, err)
			}
		}
	}
}
