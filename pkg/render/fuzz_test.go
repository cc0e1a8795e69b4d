package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// FuzzSplitDocuments: SplitDocuments never panics; what it returns is a
// list of Kubernetes objects located in the file, or one located,
// one-line error. Run: go test ./pkg/render -fuzz FuzzSplitDocuments
func FuzzSplitDocuments(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	f.Add([]byte("# c\n---\napiVersion: v1\nkind: List\nitems: []\n---\n...\n"))
	f.Add([]byte("a: [1, 2\n"))
	f.Add([]byte("--- {\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"s\"}}\n"))
	f.Add([]byte("apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: &a x\r\n  labels: {y: *a}\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		docs, err := render.SplitDocuments("f.yaml", b)
		if err != nil {
			var re *render.Error
			if !errors.As(err, &re) || re.File != "f.yaml" {
				t.Fatalf("error %v (%T) does not locate the problem", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has more than one line: %q", err)
			}
			if docs != nil {
				t.Fatalf("documents returned with an error")
			}
			return
		}
		lines := strings.Count(string(b), "\n") + 1
		prev := 0
		for _, d := range docs {
			o := d.Object
			if o.APIVersion == "" || o.Kind == "" || o.Name == "" {
				t.Fatalf("document at line %d is not an object: %+v", d.Line, o)
			}
			if d.File != "f.yaml" || d.Line < 1 || d.Line > lines || d.Line < prev {
				t.Fatalf("document located at %s:%d (previous %d, %d lines)", d.File, d.Line, prev, lines)
			}
			prev = d.Line
			if len(d.Raw) == 0 || d.Raw[len(d.Raw)-1] != '\n' {
				t.Fatalf("raw %q does not end in a newline", d.Raw)
			}
			if d.Length == 0 && d.Offset == 0 {
				continue // an item of a List: no text of its own
			}
			// Offset and Length locate Raw in the file: what a render
			// with DropText writes is read back from there (JSON is
			// written as YAML: Raw is not that text then).
			if d.Offset < 0 || d.Length <= 0 || d.Offset+d.Length > int64(len(b)) {
				t.Fatalf("document at line %d located at [%d:+%d] of %d bytes", d.Line, d.Offset, d.Length, len(b))
			}
			if text := b[d.Offset : d.Offset+d.Length]; string(text) != string(d.Raw) && string(text)+"\n" != string(d.Raw) && !jsonText(text) {
				t.Fatalf("document at line %d: text %q at its offset, Raw %q", d.Line, text, d.Raw)
			}
		}
	})
}

// jsonText reports whether a document's text begins with "{" (after
// white space): the stream has it as YAML.
func jsonText(text []byte) bool {
	t := strings.TrimLeft(string(text), " \t\r\n")
	return strings.HasPrefix(t, "{")
}
