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
