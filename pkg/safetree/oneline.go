package safetree

// Untrusted names are shown as well as written: Sanitize and SanitizeN
// make untrusted text (entry names, platform strings, URLs from a hostile
// image or server) safe to put in a one-line error.

import "strings"

// MaxRunes is where Sanitize cuts a long string.
const MaxRunes = 200

// Sanitize returns s as valid UTF-8 with control characters (C0, DEL and
// the C1 range, whose U+009B is a CSI to some terminals) replaced by
// '?' and at most MaxRunes runes (then "..."), so it can neither break
// the line nor smuggle terminal escapes.
func Sanitize(s string) string { return SanitizeN(s, MaxRunes) }

// SanitizeN is Sanitize with another cut: at most maxRunes runes.
func SanitizeN(s string, maxRunes int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return '?'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxRunes {
		s = string(r[:maxRunes]) + "..."
	}
	return s
}
