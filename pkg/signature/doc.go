// Package signature signs add-ons and verifies their signatures the way
// cosign does with a key pair, offline (no transparency log): the same
// key files, the same payload (sigstore's simple-signing "cosign container
// image signature"), the same storage (an image tagged sha256-HEX.sig
// beside the signed manifest, one layer per signature, the signature in
// the layer's dev.cosignproject.cosign/signature annotation). cosign
// verify --key --insecure-ignore-tlog accepts what Sign writes, and
// Verify accepts what cosign sign --key --tlog-upload=false writes.
//
// Verify also reads cosign 3's default form: a Sigstore bundle (a DSSE
// envelope of an in-toto statement with cosign sign's predicate type)
// pushed as a referrer whose subject is the signed manifest. It is parsed
// with sigstore's own schema (github.com/sigstore/protobuf-specs) and
// checked with the same keys, offline: the statement must name the
// manifest digest exactly, and what the bundle carries to verify it (a
// key hint, a certificate, log entries) is not trusted.
//
// The keys, the payload and the signing algorithms are sigstore's own
// (github.com/sigstore/sigstore). Verification is behind the Verifier
// interface, so keyless verification (Fulcio certificates, Rekor) can be
// added without changing its callers.
package signature
