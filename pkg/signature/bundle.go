package signature

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// What cosign 3 signs: a DSSE envelope whose payload is an in-toto
// statement about the manifest digest, with cosign sign's predicate type.
const (
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// InTotoStatementType is the _type of an in-toto v1 statement.
	InTotoStatementType = "https://in-toto.io/Statement/v1"
)

// The search for a Sigstore bundle that verifies is bounded by its work,
// not by a bundle's place in the listing: anyone who can push a referrer
// can push junk bundles whose digests sort before the real one, so each
// candidate is checked as soon as it is read and the search stops at the
// first that verifies. It reads at most KeyVerifier.Limits'
// MaxBundleReferrers referrer manifests, and its reads of them and their
// bundles count against MaxBundleSearchBytes (each bundle also capped
// like a legacy payload, by MaxSignatureBytes), the one byte budget of a
// verification, which the legacy signature read before it shares
// (budget); past either bound it stops with a *BundleSearchError. The defaults are safetree's
// (DefaultMaxBundleReferrers, DefaultMaxBundleSearchBytes).

// BundleSearchError says the search for a Sigstore bundle stopped at
// its bound (safetree.Limits' MaxBundleReferrers or
// MaxBundleSearchBytes) before one verified: Checked candidates were
// read and none verified, Unread were listed and not read. It is one of
// the reasons under ErrBadSignature, and unwraps to the
// *safetree.LimitError of the bound it met (its Which says which one to
// raise); an operator cleans the repository of the referrers that are
// not signatures of the add-on, or raises the bound.
type BundleSearchError struct {
	// Checked is how many candidates (listed as Sigstore bundles) were
	// read and checked; Unread how many were left.
	Checked, Unread int
	// Bound is the bound that stopped the search.
	Bound *safetree.LimitError
}

func (e *BundleSearchError) Error() string {
	return fmt.Sprintf("checked %d Sigstore bundle referrers, none verified, and left %d unread: the search stops at %d %s (remove the referrers that are not signatures of this add-on)", e.Checked, e.Unread, e.Bound.Limit, e.Bound.Name)
}

// Unwrap is the bound's *safetree.LimitError.
func (e *BundleSearchError) Unwrap() error { return e.Bound }

// verifyBundles checks the Sigstore bundles that refer to d at loc
// (cosign 3 sign's storage: the referrers API, or the sha256-HEX fallback
// index on a registry without it, as pkg/referrers finds them), in
// digest order, and returns the first that one of the keys verifies.
// Else it returns why each failed: a referrer that is not a bundle is
// not looked at; one that claims to be and is not readable as one, or
// does not verify, is a reason in why, and so is a search stopped at its
// bound (a *BundleSearchError). No reason: no bundle refers to d.
func (v *KeyVerifier) verifyBundles(ctx context.Context, loc referrers.Location, d v1.Hash, b *budget) (*Verified, []error, error) {
	descs, err := loc.Referrers(ctx, d)
	if errors.Is(err, referrers.ErrUnsupported) {
		// A docker-archive holds no referrers: only a tag can sign.
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	// Cheap filtering first: the listing's artifactType, before any read.
	var candidates []v1.Descriptor
	for _, desc := range descs {
		if maybeBundle(desc.ArtifactType) {
			candidates = append(candidates, desc)
		}
	}
	lim := v.Limits.WithDefaults()
	payloadCap := lim.Cap(safetree.LimitSignatureBytes)
	var why []error
	for i, desc := range candidates {
		if i == lim.MaxBundleReferrers {
			return nil, append(why, &BundleSearchError{Checked: i, Unread: len(candidates) - i, Bound: &safetree.LimitError{Name: "bundle referrers read", Limit: int64(lim.MaxBundleReferrers), Which: safetree.LimitBundleReferrers}}), nil
		}
		// A manifest is judged by its listed size before it is read,
		// and counted by what was read (a listing may lie; the read is
		// capped as every manifest is).
		if b.over(desc.Size) {
			return nil, append(why, &BundleSearchError{Checked: i, Unread: len(candidates) - i, Bound: b.exceeded()}), nil
		}
		img, layer, size, reason, err := openBundle(ctx, loc, d, desc.Digest)
		if err != nil {
			return nil, nil, err
		}
		b.spent += size
		if reason != nil {
			why = append(why, fmt.Errorf("bundle %s: %w", desc.Digest, reason))
			continue
		}
		if img == nil {
			continue // another artifact with an empty config
		}
		// The layer's size is bound to its digest (readPayload checks
		// it): the budget is judged before the body is fetched. One over
		// the per-bundle cap is refused by readPayload unread.
		if layer.Size <= payloadCap.Bytes() && b.over(layer.Size) {
			return nil, append(why, &BundleSearchError{Checked: i, Unread: len(candidates) - i, Bound: b.exceeded()}), nil
		}
		body, reason := readPayload(img, layer, payloadCap)
		if reason != nil {
			why = append(why, fmt.Errorf("bundle %s: %w", desc.Digest, reason))
			continue
		}
		b.spent += int64(len(body))
		k, err := v.checkBundle(body, d)
		if err != nil {
			why = append(why, fmt.Errorf("bundle %s%w", desc.Digest, err))
			continue
		}
		return &Verified{Digest: d.String(), Key: k.Name, Location: loc.String(), Referrer: desc.Digest.String()}, nil, nil
	}
	return nil, why, nil
}

// maybeBundle says whether a listed referrer may be a Sigstore bundle by
// the artifactType the listing gives: the bundle's own, or the media type
// of its empty config, which some registries list instead (go-
// containerregistry's). The listing is only a filter: the manifest read
// decides (openBundle).
func maybeBundle(artifactType string) bool {
	return artifactType == string(mediatypes.SigstoreBundle) || artifactType == string(mediatypes.OCIEmpty)
}

// openBundle opens the referrer r and finds its one Sigstore bundle
// layer, unread. It returns the bytes of the manifest read, and no image
// for a manifest that is no bundle, why it is not a bundle about d (one
// listed and gone among them: a stale fallback index), or an error when
// it cannot be read at all.
func openBundle(ctx context.Context, loc referrers.Location, d, r v1.Hash) (img v1.Image, layer v1.Descriptor, size int64, why, err error) {
	m, err := loc.Open(ctx, r)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, v1.Descriptor{}, 0, errors.New("listed, and not found"), nil
	}
	if err != nil {
		return nil, v1.Descriptor{}, 0, nil, err
	}
	size = m.Descriptor.Size
	if m.Image == nil {
		return nil, v1.Descriptor{}, size, errors.New("an index, not a bundle manifest"), nil
	}
	man, err := m.Image.Manifest()
	if err != nil {
		return nil, v1.Descriptor{}, size, nil, err
	}
	// The listing is the registry's word; the manifest's bytes are
	// checked against r.
	if man.Subject == nil || man.Subject.Digest != d {
		return nil, v1.Descriptor{}, size, errors.New("its manifest is about another subject"), nil
	}
	if man.ArtifactType != string(mediatypes.SigstoreBundle) && man.Config.ArtifactType != string(mediatypes.SigstoreBundle) {
		return nil, v1.Descriptor{}, size, nil, nil
	}
	if len(man.Layers) != 1 {
		return nil, v1.Descriptor{}, size, fmt.Errorf("%d layers, not one %s", len(man.Layers), mediatypes.SigstoreBundle), nil
	}
	if mt := man.Layers[0].MediaType; mt != mediatypes.SigstoreBundle {
		return nil, v1.Descriptor{}, size, fmt.Errorf("its layer is %q, not %s", safetree.Sanitize(string(mt)), mediatypes.SigstoreBundle), nil
	}
	return m.Image, man.Layers[0], size, nil, nil
}

// checkBundle verifies one Sigstore bundle as cosign 3 verify --key
// --insecure-ignore-tlog does, offline: its DSSE envelope's signature over
// the envelope's pre-authentication encoding by one of the keys, of an
// in-toto statement with cosign sign's predicate type whose subject is d.
// What the bundle says verifies it (a key hint, a certificate, log
// entries) is not trusted: only the given keys are. Its errors read after
// "bundle R".
func (v *KeyVerifier) checkBundle(body []byte, d v1.Hash) (Key, error) {
	var b protobundle.Bundle
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &b); err != nil {
		return Key{}, fmt.Errorf(": not a Sigstore bundle: %w", err)
	}
	env := b.GetDsseEnvelope()
	if env == nil {
		// cosign sign-blob's message signature signs a file's digest,
		// not a manifest: no image signature.
		return Key{}, fmt.Errorf(": no DSSE envelope (a message signature signs a blob, not a manifest)")
	}
	if env.GetPayloadType() != InTotoPayloadType {
		return Key{}, fmt.Errorf(": payload type %q, not %s", env.GetPayloadType(), InTotoPayloadType)
	}
	sigs := env.GetSignatures()
	if len(sigs) > MaxSignatures {
		return Key{}, fmt.Errorf(": %d signatures, over %d", len(sigs), MaxSignatures)
	}
	pae := PAE(env.GetPayloadType(), env.GetPayload())
	for _, k := range v.Keys {
		for _, s := range sigs {
			if len(s.GetSig()) == 0 || k.verify(s.GetSig(), pae) != nil {
				continue
			}
			if err := statementSigns(env.GetPayload(), d); err != nil {
				return k, fmt.Errorf(" (key %s): %w", k.Name, err)
			}
			return k, nil
		}
	}
	if who, ok := certificateOf(&b); ok {
		return Key{}, fmt.Errorf(": %w, by %s, not by %s (a key verifier checks keys, never a certificate's identity or a transparency log)", ErrKeyless, safetree.Sanitize(who), keyNames(v.Keys))
	}
	return Key{}, fmt.Errorf(": not made by %s", keyNames(v.Keys))
}

// certificateOf says whether a bundle's verification material is a
// certificate (keyless signing) and, when it parses, whom it names.
func certificateOf(b *protobundle.Bundle) (string, bool) {
	vm := b.GetVerificationMaterial()
	raw := vm.GetCertificate().GetRawBytes()
	if certs := vm.GetX509CertificateChain().GetCertificates(); raw == nil && len(certs) > 0 {
		raw = certs[0].GetRawBytes()
	}
	if vm.GetCertificate() == nil && vm.GetX509CertificateChain() == nil {
		return "", false
	}
	c, err := x509.ParseCertificate(raw)
	if err != nil {
		return "a certificate that does not parse", true
	}
	var names []string
	names = append(names, c.EmailAddresses...)
	for _, u := range c.URIs {
		names = append(names, u.String())
	}
	if len(names) == 0 {
		return "a certificate for " + strconv.Quote(c.Subject.String()), true
	}
	return "a certificate for " + strings.Join(names, ", "), true
}

// statementSigns checks that an in-toto statement is cosign sign's about
// the manifest d: its subject names d's digest exactly.
func statementSigns(payload []byte, d v1.Hash) error {
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.NewDecoder(bytes.NewReader(payload)).Decode(&st); err != nil {
		return fmt.Errorf("statement: %w", err)
	}
	if st.Type != InTotoStatementType {
		return fmt.Errorf("statement type %q, not %s", st.Type, InTotoStatementType)
	}
	// An attestation made with the key (provenance, an SBOM) is a claim
	// about the add-on, not a signature of it.
	if st.PredicateType != mediatypes.CosignSignPredicateType {
		return fmt.Errorf("predicate type %q: an attestation, not a signature (%s)", st.PredicateType, mediatypes.CosignSignPredicateType)
	}
	var named []string
	for _, s := range st.Subject {
		if s.Digest[d.Algorithm] == d.Hex {
			return nil
		}
		for alg, hex := range s.Digest {
			named = append(named, alg+":"+hex)
		}
	}
	return fmt.Errorf("signs another manifest, %v", named)
}

// PAE is DSSE's pre-authentication encoding of a payload, the bytes a
// DSSE signature signs: "DSSEv1 LEN(type) type LEN(body) body".
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}
