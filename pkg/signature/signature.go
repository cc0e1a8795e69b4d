package signature

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Where and how cosign stores a signature.
const (
	// TagSuffix ends the tag of a manifest's signatures: sha256-HEX.sig.
	TagSuffix = ".sig"
	// AnnotationSignature is the layer annotation holding the base64
	// signature of the payload.
	AnnotationSignature = "dev.cosignproject.cosign/signature"
)

// MaxSignatures caps the signatures read from a signature image: it is
// input like any other (its payloads are capped by safetree.Limits).
const MaxSignatures = 64

// Errors callers can test with errors.Is.
var (
	// ErrNoSignature: the manifest has no signature at the location.
	ErrNoSignature = errors.New("no signature")
	// ErrBadSignature: signatures are there, and none is a valid signature
	// of this manifest by one of the keys.
	ErrBadSignature = errors.New("no valid signature")
	// ErrKeyless: a Sigstore bundle was signed keylessly (its
	// verification material is a certificate, as cosign sign without
	// --key makes it) and no given key made it. A KeyVerifier checks
	// keys only, never a certificate's identity or a transparency log;
	// it is one of the reasons under ErrBadSignature.
	ErrKeyless = errors.New("signed keylessly")
)

// Tag is the tag of the signatures of the manifest d: sha256-HEX.sig.
func Tag(d v1.Hash) string { return referrers.CosignTag(d, TagSuffix) }

// Payload is the simple-signing payload cosign signs for the manifest d
// claimed to be identity (a repository name, as cosign writes it; it is
// informative: verification checks the digest).
func Payload(d v1.Hash, identity string, annotations map[string]any) ([]byte, error) {
	return json.Marshal(payload.SimpleContainerImage{
		Critical: payload.Critical{
			Identity: payload.Identity{DockerReference: identity},
			Image:    payload.Image{DockerManifestDigest: d.String()},
			Type:     payload.CosignSignatureType,
		},
		Optional: annotations,
	})
}

// SignOptions change a Sign.
type SignOptions struct {
	// Identity is the docker-reference the payload claims (cosign writes
	// the repository name); "" for none.
	Identity string
	// Annotations go into the payload's "optional" object, as cosign
	// sign -a KEY=VALUE puts them.
	Annotations map[string]any
}

// Signed describes a signature Sign wrote.
type Signed struct {
	// Digest is the signed manifest's.
	Digest string `json:"digest"`
	// Tag is where the signature is: sha256-HEX.sig beside the manifest.
	Tag string `json:"tag"`
	// Location names where that tag is (a repository, a layout).
	Location string `json:"location"`
	// Signature is the base64 signature of the payload.
	Signature string `json:"signature"`
}

// Sign signs the manifest d at loc with signer and stores the signature
// as cosign does: a layer appended to the image tagged sha256-HEX.sig (the
// image is created if there is none).
func Sign(ctx context.Context, loc referrers.Location, d v1.Hash, signer sigsig.Signer, opts SignOptions) (*Signed, error) {
	body, err := Payload(d, opts.Identity, opts.Annotations)
	if err != nil {
		return nil, err
	}
	sig, err := signer.SignMessage(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", d, err)
	}
	b64 := base64.StdEncoding.EncodeToString(sig)
	tag := Tag(d)
	base, err := existing(ctx, loc, tag)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(body, mediatypes.CosignSimpleSigning)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:       layer,
		MediaType:   mediatypes.CosignSimpleSigning,
		Annotations: map[string]string{AnnotationSignature: b64},
	})
	if err != nil {
		return nil, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	h, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	m := &referrers.Manifest{Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: size}, Image: img}
	if err := loc.Write(ctx, m, tag); err != nil {
		return nil, fmt.Errorf("store the signature of %s: %w", d, err)
	}
	return &Signed{Digest: d.String(), Tag: tag, Location: loc.String(), Signature: b64}, nil
}

// existing is the signature image at tag, or a new empty one, OCI-typed.
func existing(ctx context.Context, loc referrers.Location, tag string) (v1.Image, error) {
	desc, err := loc.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
	}
	if err != nil {
		return nil, err
	}
	m, err := loc.Open(ctx, desc.Digest)
	if err != nil {
		return nil, err
	}
	if m.Image == nil {
		return nil, fmt.Errorf("%s at %s: an index, not a signature image", tag, loc)
	}
	return m.Image, nil
}

// Verified says which signature verified.
type Verified struct {
	// Digest is the verified manifest's.
	Digest string `json:"digest"`
	// Key names the key that verified it.
	Key string `json:"key"`
	// Identity is the docker-reference the payload claims.
	Identity string `json:"identity"`
	// Tag and Location are where the signature was found: Tag is the
	// legacy sha256-HEX.sig, "" for a Sigstore bundle.
	Tag      string `json:"tag,omitempty"`
	Location string `json:"location"`
	// Referrer is the digest of the Sigstore bundle's manifest (cosign 3
	// sign), "" for a legacy signature.
	Referrer string `json:"referrer,omitempty"`
}

// Verifier checks that a manifest is signed. KeyVerifier checks with
// public keys; a keyless verifier (certificates, a transparency log) can
// implement it too.
type Verifier interface {
	Verify(ctx context.Context, loc referrers.Location, d v1.Hash) (*Verified, error)
}

// KeyVerifier accepts a manifest signed by any one of Keys. It is a
// source.Verifier too (VerifyAt): set it as source.Options.Verify to
// check every add-on before it is read.
type KeyVerifier struct {
	Keys []Key
	// Limits bound what a verification reads: each payload or bundle
	// (MaxSignatureBytes), the search for a Sigstore bundle
	// (MaxBundleReferrers) and every signature byte read, legacy or
	// bundle (MaxBundleSearchBytes). A zero field is its default.
	Limits safetree.Limits
}

// VerifyAt is Verify without its result: the source.Verifier method.
func (v *KeyVerifier) VerifyAt(ctx context.Context, loc referrers.Location, d v1.Hash) error {
	_, err := v.Verify(ctx, loc, d)
	return err
}

// Verify finds the signatures of d at loc and returns the first that one
// of the keys verifies and that names d. It reads both forms cosign
// writes: the legacy image tagged sha256-HEX.sig (cosign 2, addonpkg
// sign), then the Sigstore bundles whose subject is d (cosign 3 sign, by
// the referrers API or the sha256-HEX fallback index). No signature is an
// error wrapping ErrNoSignature; signatures that all fail, one wrapping
// ErrBadSignature and, for each, why (a bundle or payload over its cap,
// or a legacy payload past the byte bound of the whole verification,
// v.Limits' MaxBundleSearchBytes, is a *safetree.LimitError; a search
// for a bundle stopped at its bound, MaxBundleReferrers or that byte
// bound, a *BundleSearchError).
func (v *KeyVerifier) Verify(ctx context.Context, loc referrers.Location, d v1.Hash) (*Verified, error) {
	if len(v.Keys) == 0 {
		return nil, fmt.Errorf("verify %s: %w: no key given", d, ErrBadKey)
	}
	b := &budget{max: v.Limits.WithDefaults().MaxBundleSearchBytes}
	res, why, sigTag, err := v.verifyTagged(ctx, loc, d, b)
	if res != nil || err != nil {
		return res, err
	}
	res, bundleWhy, err := v.verifyBundles(ctx, loc, d, b)
	if res != nil || err != nil {
		if err != nil {
			return nil, fmt.Errorf("%s@%s: look up Sigstore bundles: %w", loc, d, err)
		}
		return res, nil
	}
	why = append(why, bundleWhy...)
	if !sigTag && len(bundleWhy) == 0 {
		return nil, fmt.Errorf("%s@%s: %w (no tag %s beside it, no Sigstore bundle refers to it)", loc, d, ErrNoSignature, Tag(d))
	}
	if len(why) == 0 {
		why = append(why, fmt.Errorf("%s holds no cosign signature layer", Tag(d)))
	}
	return nil, fmt.Errorf("%s@%s: %w: %w", loc, d, ErrBadSignature, reasons(why))
}

// reasons are why each signature failed, in one message.
type reasons []error

// maxReasonsShown bounds the reasons one message prints: hundreds of junk
// referrers would make it hundreds of lines. The last is always printed
// (a bounded bundle search says so last, with its counts); Unwrap still
// gives every reason.
const maxReasonsShown = 8

func (r reasons) Error() string {
	shown := []error(r)
	if len(r) > maxReasonsShown {
		shown = append(slices.Clip(r[:maxReasonsShown-1]), fmt.Errorf("%d more reasons", len(r)-maxReasonsShown), r[len(r)-1])
	}
	s := make([]string, len(shown))
	for i, e := range shown {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (r reasons) Unwrap() []error { return r }

// verifyTagged checks the legacy signatures, the image tagged
// sha256-HEX.sig: the first that verifies, else why each failed, and
// whether the tag is there at all.
func (v *KeyVerifier) verifyTagged(ctx context.Context, loc referrers.Location, d v1.Hash, b *budget) (*Verified, []error, bool, error) {
	tag := Tag(d)
	desc, err := loc.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s@%s: look up the signature: %w", loc, d, err)
	}
	if b.over(desc.Size) {
		return nil, []error{fmt.Errorf("%s: %w", tag, b.exceeded())}, true, nil
	}
	m, err := loc.Open(ctx, desc.Digest)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s@%s: read the signature: %w", loc, d, err)
	}
	b.spent += m.Descriptor.Size
	if m.Image == nil {
		return nil, []error{fmt.Errorf("%s is an index, not a signature image", tag)}, true, nil
	}
	man, err := m.Image.Manifest()
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s@%s: read the signature: %w", loc, d, err)
	}
	// Over the cap, the tag is a reason, not the verdict: anyone who can
	// push a tag could otherwise stop the Sigstore bundles from being read.
	if len(man.Layers) > MaxSignatures {
		return nil, []error{fmt.Errorf("%s holds %d signatures, over %d: none read", tag, len(man.Layers), MaxSignatures)}, true, nil
	}
	var why []error
	payloadCap := v.Limits.WithDefaults().Cap(safetree.LimitSignatureBytes)
	for i, l := range man.Layers {
		if l.MediaType != mediatypes.CosignSimpleSigning {
			continue
		}
		// Judged before the read, as a bundle is; one over the payload
		// cap is refused by readPayload unread.
		if l.Size <= payloadCap.Bytes() && b.over(l.Size) {
			why = append(why, fmt.Errorf("%s: signature %d: %w", tag, i+1, b.exceeded()))
			break
		}
		body, err := readPayload(m.Image, l, payloadCap)
		if err != nil {
			why = append(why, fmt.Errorf("signature %d: %w", i+1, err))
			continue
		}
		b.spent += int64(len(body))
		p, k, err := v.check(body, l.Annotations[AnnotationSignature], d)
		if err != nil {
			why = append(why, fmt.Errorf("signature %d%w", i+1, err))
			continue
		}
		return &Verified{Digest: d.String(), Key: k.Name, Identity: p.Critical.Identity.DockerReference, Tag: tag, Location: loc.String()}, nil, true, nil
	}
	if len(why) == 0 {
		why = append(why, fmt.Errorf("%s holds no cosign signature layer", tag))
	}
	return nil, why, true, nil
}

// check verifies one signature layer: the base64 signature sigB64 of the
// payload body, by one of the keys, of a payload naming d. Its errors
// read after "signature N".
func (v *KeyVerifier) check(body []byte, sigB64 string, d v1.Hash) (*payload.SimpleContainerImage, Key, error) {
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil || len(sig) == 0 {
		return nil, Key{}, fmt.Errorf(": no base64 %s annotation", AnnotationSignature)
	}
	for _, k := range v.Keys {
		if err := k.verify(sig, body); err != nil {
			continue
		}
		var p payload.SimpleContainerImage
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, k, fmt.Errorf(" (key %s): payload: %w", k.Name, err)
		}
		if p.Critical.Type != payload.CosignSignatureType {
			return nil, k, fmt.Errorf(" (key %s): payload type %q", k.Name, p.Critical.Type)
		}
		if p.Critical.Image.DockerManifestDigest != d.String() {
			return nil, k, fmt.Errorf(" (key %s) signs another manifest, %s", k.Name, p.Critical.Image.DockerManifestDigest)
		}
		return &p, k, nil
	}
	return nil, Key{}, fmt.Errorf(": not made by %s", keyNames(v.Keys))
}

func keyNames(keys []Key) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	if len(names) == 1 {
		return "the key " + names[0]
	}
	return "any of the keys " + strings.Join(names, ", ")
}

// budget counts the signature bytes one Verify reads, the legacy
// signature image and its payloads, then the Sigstore bundle referrers
// and their bundles, against one bound (safetree.Limits'
// MaxBundleSearchBytes): the legacy tag alone could hold MaxSignatures
// payloads of MaxSignatureBytes each, read on top of the bundle search's
// bytes otherwise. Each read is judged by its claimed size before it is
// made and counted by what was read.
type budget struct{ spent, max int64 }

func (b *budget) over(size int64) bool { return b.spent+max(size, 0) > b.max }

// exceeded is the error of a read refused by the budget.
func (b *budget) exceeded() *safetree.LimitError {
	return &safetree.LimitError{Name: "bytes of signatures read", Limit: b.max, Which: safetree.LimitBundleSearchBytes}
}

// readPayload reads a signature layer's bytes, capped by payloadCap and
// checked against the layer's digest.
func readPayload(img v1.Image, l v1.Descriptor, payloadCap safetree.Cap) ([]byte, error) {
	if l.Size < 0 {
		return nil, fmt.Errorf("payload %s: %d bytes", l.Digest, l.Size)
	}
	if err := payloadCap.Check(l.Digest.String(), l.Size); err != nil {
		return nil, err
	}
	body, err := verify.Layer(img, l, payloadCap)
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", l.Digest, err)
	}
	return body, nil
}
