package mediatypes

import "strings"

// IsReferrerTag reports whether tag names what refers to another
// manifest rather than an add-on: the referrers tag-schema fallback index
// sha256-HEX (OCI distribution spec), or cosign's sha256-HEX.sig, .att and
// .sbom (spec/signatures.md).
func IsReferrerTag(tag string) bool {
	rest, ok := strings.CutPrefix(tag, "sha256-")
	if !ok || len(rest) < 64 {
		return false
	}
	for _, c := range rest[:64] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	switch rest[64:] {
	case "", ".sig", ".att", ".sbom":
		return true
	}
	return false
}

// The "kind" annotation of `cosign save`: it writes an OCI layout with
// no ref names, marking each entry of index.json with what it holds
// instead, the signed image or index and what refers to it (its
// signatures, attestations and SBOMs, without a subject); cosign
// --local-image, and tools that read these layouts, find them by it.
const (
	AnnotationCosignKind = "kind"
	CosignKindImage      = "dev.cosignproject.cosign/image"
	CosignKindImageIndex = "dev.cosignproject.cosign/imageIndex"
	CosignKindSigs       = "dev.cosignproject.cosign/sigs"
	CosignKindAtts       = "dev.cosignproject.cosign/atts"
	CosignKindSBOMs      = "dev.cosignproject.cosign/sboms"
)

// CosignSavedSuffix is the cosign tag suffix (".sig", ".att" or ".sbom")
// of what an entry of a `cosign save` layout holds, by its annotations;
// "" for an entry that is none of them (the signed image itself, or an
// entry of any other layout).
func CosignSavedSuffix(annotations map[string]string) string {
	switch annotations[AnnotationCosignKind] {
	case CosignKindSigs:
		return ".sig"
	case CosignKindAtts:
		return ".att"
	case CosignKindSBOMs:
		return ".sbom"
	}
	return ""
}

// IsCosignSavedSubject reports whether an entry of a `cosign save`
// layout is the image or index that was saved (and signed).
func IsCosignSavedSubject(annotations map[string]string) bool {
	k := annotations[AnnotationCosignKind]
	return k == CosignKindImage || k == CosignKindImageIndex
}
