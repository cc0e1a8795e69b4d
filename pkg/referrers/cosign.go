package referrers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Media types of what cosign stores at its tags: a signature's layers
// hold simple-signing payloads, an attestation's DSSE envelopes, an
// SBOM's layers a document in one of the SBOM formats cosign attaches
// (mediatypes.SBOMTypes).
const (
	CosignSimpleSigningType = string(mediatypes.CosignSimpleSigning)
	DSSEEnvelopeType        = string(mediatypes.DSSEEnvelope)
)

// MaxCosignLayers bounds the layers (signatures) of one manifest read to
// tell a cosign tag's manifest for what it is; each payload is capped by
// safetree's signature cap.
const MaxCosignLayers = 64

var signaturePayloadCap = safetree.DefaultCap(safetree.LimitSignatureBytes).Max

// Ignored is a manifest found at one of cosign's tags that is not what
// the tag says (a registry that answers every tag with the same manifest,
// an add-on tagged sha256-HEX.sig): Find and Copy leave it.
type Ignored struct {
	// Subject is the manifest the tag is named for.
	Subject string
	// Tag is the cosign tag.
	Tag string
	// Digest is the manifest found there.
	Digest string
	// Reason says what it is not.
	Reason string
}

func (i Ignored) String() string {
	return fmt.Sprintf("%s (%s): %s", i.Tag, i.Digest, i.Reason)
}

// cosignKind checks that the manifest desc at cosign's tag of subject d
// with the given suffix is what the suffix says. It returns why not (""
// when it is), or an error when it cannot be read.
func cosignKind(ctx context.Context, loc Location, d v1.Hash, suffix string, desc v1.Descriptor) (string, error) {
	m, err := loc.Open(ctx, desc.Digest)
	if err != nil {
		return "", err
	}
	if m.Index != nil {
		return "an index, not a cosign " + what(suffix) + " manifest", nil
	}
	man, err := m.Image.Manifest()
	if err != nil {
		return "", err
	}
	if len(man.Layers) == 0 {
		return "no layers: not a cosign " + what(suffix), nil
	}
	if len(man.Layers) > MaxCosignLayers {
		return fmt.Sprintf("%d layers, over %d", len(man.Layers), MaxCosignLayers), nil
	}
	for _, l := range man.Layers {
		mt := string(l.MediaType)
		switch suffix {
		case ".sig":
			if mt != CosignSimpleSigningType {
				return fmt.Sprintf("a layer of type %q, not a cosign signature (%s)", mt, CosignSimpleSigningType), nil
			}
			if l.Size < 0 || l.Size > signaturePayloadCap {
				return fmt.Sprintf("a payload of %d bytes, over %d", l.Size, signaturePayloadCap), nil
			}
			body, err := verify.Layer(m.Image, l, safetree.DefaultCap(safetree.LimitSignatureBytes))
			if err != nil {
				return "", fmt.Errorf("payload %s: %w", l.Digest, err)
			}
			if got := signedDigest(body); got != d.String() {
				return fmt.Sprintf("a payload that names %q, not %s", got, d), nil
			}
		case ".att":
			if mt != DSSEEnvelopeType {
				return fmt.Sprintf("a layer of type %q, not an attestation (%s)", mt, DSSEEnvelopeType), nil
			}
		case ".sbom":
			if !mediatypes.IsSBOM(mediatypes.MediaType(mt)) {
				return fmt.Sprintf("a layer of type %q, not an SBOM", mt), nil
			}
		}
	}
	return "", nil
}

func what(suffix string) string {
	switch suffix {
	case ".sig":
		return "signature"
	case ".att":
		return "attestation"
	}
	return "SBOM"
}

// signedDigest is the manifest digest a simple-signing payload names
// (critical.image.docker-manifest-digest), "" when it names none.
func signedDigest(payload []byte) string {
	var p struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.NewDecoder(bytes.NewReader(payload)).Decode(&p); err != nil {
		return ""
	}
	return p.Critical.Image.Digest
}
