package oneline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	for _, in := range []string{"ok", "a\nb\x1b[31m", "caf\xe9", strings.Repeat("€", 300)} {
		got := Sanitize(in)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\x1b") || utf8.RuneCountInString(got) > MaxRunes+3 {
			t.Errorf("Sanitize(%q) = %q", in, got)
		}
	}
}
