// Package oneline makes untrusted text (entry names, platform strings,
// URLs from a hostile image or server) safe to put in a one-line error.
package oneline

import "strings"

// MaxRunes is where Sanitize cuts a long string.
const MaxRunes = 200

// Sanitize returns s as valid UTF-8 with control characters replaced by
// '?' and at most MaxRunes runes (then "..."), so it can neither break
// the line nor smuggle terminal escapes.
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > MaxRunes {
		s = string(r[:MaxRunes]) + "..."
	}
	return s
}
