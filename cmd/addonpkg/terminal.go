package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// terminalSafe wraps w so that what a table prints cannot drive the
// terminal: every control character but tab and newline (which the
// table itself writes) becomes '?', C1 controls included, and invalid
// UTF-8 becomes U+FFFD. Values that could also break a line are
// sanitized before they reach the table (safetree.Sanitize).
func terminalSafe(w io.Writer) io.Writer { return safeWriter{w} }

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case r == '\t' || r == '\n':
			out = append(out, byte(r))
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			out = append(out, '?')
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sanitizeAll is safetree.Sanitize of each string, for lists printed in
// a table.
func sanitizeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safetree.Sanitize(s)
	}
	return out
}

// escapeJSONControls writes DEL and the C1 controls of encoded JSON as
// \u escapes. They can only be inside strings, where the escape means
// the same character.
func escapeJSONControls(s string) string {
	if !strings.ContainsFunc(s, isDELorC1) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isDELorC1(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isDELorC1(r rune) bool { return r >= 0x7f && r <= 0x9f }
