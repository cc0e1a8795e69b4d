package safetree

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Terminal controls in any encoding become '?'.
func TestSanitizeControls(t *testing.T) {
	for in, want := range map[string]string{
		"a\x1b]0;title\x07b": "a?]0;title?b",
		"c\u009b31md":        "c?31md",
		"del\x7f":            "del?",
		"tab\there":          "tab?here",
		"ünïcödé ok":         "ünïcödé ok",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for _, in := range []string{"ok", "a\nb\x1b[31m", "caf\xe9", strings.Repeat("€", 300)} {
		got := Sanitize(in)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\x1b") || utf8.RuneCountInString(got) > MaxRunes+3 {
			t.Errorf("Sanitize(%q) = %q", in, got)
		}
	}
}
