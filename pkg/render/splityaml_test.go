package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// splitYAMLByLine is the plain line-by-line split that splitYAML must
// match: it visits every line.
func splitYAMLByLine(b []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(b); {
		end := bytes.IndexByte(b[i:], '\n')
		next := len(b)
		if end >= 0 {
			next = i + end + 1
		}
		l := bytes.TrimRight(b[i:next], "\r\n")
		if isDocMarker(l) {
			out = append(out, chunk{text: b[start:i], off: start, line: startLine})
			rest := bytes.TrimSpace(l[3:])
			if len(rest) > 0 && rest[0] != '#' {
				start, startLine = i+3, line
			} else {
				start, startLine = next, line+1
			}
		} else if bytes.Equal(l, []byte("...")) {
			out = append(out, chunk{text: b[start:i], off: start, line: startLine})
			start, startLine = next, line+1
		}
		i = next
		line++
	}
	return append(out, chunk{text: b[start:], off: start, line: startLine})
}

func TestSplitYAMLMatchesLineByLine(t *testing.T) {
	pieces := []string{"---\n", "--- # c\n", "--- !x\n", "---x\n", "...\n", "....\n", "-\n", "- a\n", ".\n",
		"a: b\n", "\n", "\r\n", "---\r\n", "  ---\n", "# ---\n", "k: |\n  ---\n", "---", "...", "-", ".", "x"}
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 20000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		got, want := splitYAML(b), splitYAMLByLine(b)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d %q:\n got %v\nwant %v", n, b, got, want)
		}
	}
}
