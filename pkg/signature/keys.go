package signature

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// PasswordEnv is the environment variable the private key's password is
// read from, as cosign reads it.
const PasswordEnv = "COSIGN_PASSWORD"

// ErrBadKey marks a key file that cannot be read or decrypted.
var ErrBadKey = errors.New("unusable key")

// keyError is ErrBadKey for the key named name (its file), as an
// *fs.PathError, so that a caller can tell which of several keys it is
// and name it as its user gave it: "load key NAME: unusable key: CAUSE",
// hint after the cause.
func keyError(name string, err error, hint string) error {
	return &fs.PathError{Op: "load key", Path: name, Err: fmt.Errorf("%w: %w%s", ErrBadKey, err, hint)}
}

// Key is a public key that signatures are checked against.
type Key struct {
	// Name says which key in messages (the file name).
	Name string
	// Verifier checks a signature over the payload's SHA-256.
	Verifier sigsig.Verifier
	// curveHash, for a P-384 or P-521 key, checks one over the hash
	// its curve is paired with (LoadPublicKey).
	curveHash sigsig.Verifier
}

// verify checks sig, a signature of body, as LoadPublicKey says.
func (k Key) verify(sig, body []byte) error {
	err := k.Verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body))
	if err != nil && k.curveHash != nil && k.curveHash.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)) == nil {
		return nil
	}
	return err
}

// LoadPublicKey reads a PEM public key (cosign.pub: ECDSA, RSA or
// Ed25519).
//
// A signature over the payload's SHA-256 is accepted from every key: it
// is what cosign verify checks by default and what LoadPrivateKey's
// signer makes. From a P-384 or P-521 key, one over the hash sigstore's
// algorithm registry pairs with the curve (SHA-384, SHA-512) is accepted
// too: cosign 2.5 and later sign with it, so without it a cosign-signed
// add-on would be refused as signed by another key.
func LoadPublicKey(name string, pemBytes []byte) (Key, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return Key{}, keyError(name, err, "")
	}
	v, err := sigsig.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return Key{}, keyError(name, err, "")
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve == elliptic.P256() {
		return Key{Name: name, Verifier: v}, nil
	}
	dv, err := sigsig.LoadDefaultVerifier(pub)
	if err != nil {
		return Key{}, keyError(name, err, "")
	}
	return Key{Name: name, Verifier: v, curveHash: dv}, nil
}

// LoadPublicKeyFile is LoadPublicKey of a file.
func LoadPublicKeyFile(file string) (Key, error) {
	b, err := readKeyFile(file)
	if err != nil {
		return Key{}, err
	}
	return LoadPublicKey(file, b)
}

// keyFileCap bounds what a key file may hold. A PEM key is a few KiB;
// the cap is the one of the other short documents a user names (values,
// add-on set declarations), so that --key /dev/zero, or a large file
// named by mistake, is refused rather than read without end.
var keyFileCap = safetree.DefaultCap(safetree.LimitDeclarationBytes)

// readKeyFile reads file, up to keyFileCap; errors are keyError's.
func readKeyFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, keyError(file, err, "")
	}
	defer f.Close()
	b, err := keyFileCap.ReadAll("", f)
	if le := (*safetree.LimitError)(nil); errors.As(err, &le) {
		le.Name = "key file size" // not the declarations' name it shares the cap with
	}
	if err != nil {
		return nil, keyError(file, err, "")
	}
	return b, nil
}

// LoadKeyVerifier is the KeyVerifier of the public key files (any one
// key suffices, LoadPublicKeyFile).
func LoadKeyVerifier(files ...string) (*KeyVerifier, error) {
	v := &KeyVerifier{}
	for _, f := range files {
		k, err := LoadPublicKeyFile(f)
		if err != nil {
			return nil, err
		}
		v.Keys = append(v.Keys, k)
	}
	return v, nil
}

// LoadPrivateKey reads a private key: cosign's encrypted format (ENCRYPTED
// SIGSTORE PRIVATE KEY, or the older ENCRYPTED COSIGN PRIVATE KEY),
// decrypted with password, or an unencrypted PKCS#8, PKCS#1 or SEC 1 PEM
// key.
func LoadPrivateKey(name string, pemBytes, password []byte) (sigsig.SignerVerifier, error) {
	if password == nil {
		password = []byte{}
	}
	pk, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, keyError(name, err, " (is "+PasswordEnv+" right?)")
	}
	sv, err := sigsig.LoadSignerVerifier(pk, crypto.SHA256)
	if err != nil {
		return nil, keyError(name, err, "")
	}
	return sv, nil
}

// LoadPrivateKeyFile is LoadPrivateKey of a file, with the password from
// $COSIGN_PASSWORD (empty when unset, as for a key generated without one).
func LoadPrivateKeyFile(file string) (sigsig.SignerVerifier, error) {
	b, err := readKeyFile(file)
	if err != nil {
		return nil, err
	}
	return LoadPrivateKey(file, b, []byte(os.Getenv(PasswordEnv)))
}

// GenerateKeyPair makes an ECDSA P-256 key pair in cosign's format (what
// cosign generate-key-pair writes): the private key encrypted with
// password, and the PEM public key.
func GenerateKeyPair(password []byte) (privatePEM, publicPEM []byte, err error) {
	if password == nil {
		password = []byte{}
	}
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
}
