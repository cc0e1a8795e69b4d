package render

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// quickSnippets are seeds near the edges of the fast path's subset.
var quickSnippets = []string{
	quickHead,
	quickHead + "data:\n  a: b: c\n",
	quickHead + "data:\n  a: x\n    y\n  b: |\n    z\n\n  c: >-\n   w\n",
	quickHead + "data:\n  a: \"x\\\"y\n   z\\\n   w\"\n  b: 'it''s\n\n    x'\n",
	quickHead + "spec:\n  containers:\n  - name: a\n    image: x\n  -   image: 'y'\n  initContainers:\n    -\n      image: \"z\"\n",
	quickHead + "rules:\n- apiGroups: [\"\"]\n  verbs: [get, 'list', \"watch\"]\n  x: {}\n",
	quickHead + "spec:\n- k:\n  - a\n  j: c\n- - d\n",
	quickHead + "data:\n  a: x # c\n    y\n",
	quickHead + "data:\n  a: |\n      \n    y\n",
	quickHead + "data:\n  a: |\n    x\n\ty\n",
	quickHead + "data:\n  a: &x y\n  b: *x\n  c: !!str 1\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
	"apiVersion: v1\nkind: List\nmetadata:\n  name: ~\nitems: []\n",
	"'apiVersion': \"v1\"\nkind: ConfigMap\nmetadata:\n  namespace: ''\n  name: a # c\n",
	"# only\n  # comments\n\n",
	"  a: b\n",
	"\ufeff" + quickHead,
}

// FuzzQuickDocument: the fast path never contradicts the slow path. Every
// document it accepts, the slow path accepts too, with the same object and
// images; every document it finds empty, the slow path finds empty.
// Run: go test ./pkg/render -run '^$' -fuzz FuzzQuickDocument
func FuzzQuickDocument(f *testing.F) {
	for _, s := range quickSnippets {
		f.Add([]byte(s))
	}
	// Real manifests: whole documents, and the head of large ones (a large
	// seed makes every run of the fuzzer slow).
	err := filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !addon.IsManifestFile(p) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, c := range splitYAML(b) {
			f.Add(quickHeadOf(c.text, 2<<10))
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		for _, c := range splitYAML(b) {
			q, ok := quickDocument(c.text)
			if !ok {
				continue
			}
			if d := quickAgrees(c.text, q); d != "" {
				t.Fatalf("%s\n%q", d, c.text)
			}
		}
	})
}

// quickHeadOf cuts b after a line at most n bytes in.
func quickHeadOf(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	if i := bytes.LastIndexByte(b[:n], '\n'); i > 0 {
		return b[:i+1]
	}
	return b[:n]
}

// quickFragments are the lines FuzzQuickDocumentShapes builds documents
// of: the constructs of the subset and their neighbours outside it.
var quickFragments = []string{
	"", "# c", "a: b", "a:", "a: b # c", "a: b: c", "a: b:", "x", "x: ", "k :",
	"- a", "-", "- a: b", "- a:", "- - a", "- # c", "-  b: c", "-x",
	"apiVersion: v1", "kind: K", "metadata:", "name: n", "namespace: s",
	"name: ~", "kind: 1", "name: 'q'", "name: \"q", "name:",
	"containers:", "initContainers: []", "image: i", "image: 'j'", "image:", "- image: k",
	"a: |", "a: >-", "a: |+", "- |", "a: |2", "a: | x",
	"a: \"x", "a: 'x", "y\"", "y'", "y\" z", "y' # c", "a: \"x\\", "a: \"\\q\"",
	"a: [x, 'y', \"z\"]", "a: []", "a: {}", "a: [x", "a: [x,]", "- [a]", "a: {b: c}",
	"\"k\": v", "'k': v", "'k':v", "a: &x y", "a: *x", "a: !t y", "? a", ": b",
	"a: ~", "a: @x", "a: `x`", "a: -", "a: - b", "a: x\ty", "\tb: c", "...", "---x",
	"<<: a", "a: \"\"", "a: ''", "a: x #", "a: #", "a:#", "a: é",
}

// FuzzQuickDocumentShapes builds documents out of quickHead then
// quickFragments at various indentations, so that the fuzzer explores how lines nest
// rather than how bytes mutate: each pair of input bytes is one line, its
// indentation and its fragment. The check is FuzzQuickDocument's.
// Run: go test ./pkg/render -run '^$' -fuzz FuzzQuickDocumentShapes
func FuzzQuickDocumentShapes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 2, 2, 2, 4, 3, 6, 2})
	f.Add([]byte{0, 28, 0, 12, 2, 33, 4, 10, 4, 3, 6, 2, 2, 39, 4, 1, 2, 44, 6, 37, 4, 0, 8, 4})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 512 {
			return
		}
		var b bytes.Buffer
		b.WriteString(quickHead) // an object, unless the lines break it
		for i := 0; i+1 < len(prog); i += 2 {
			b.WriteString("        "[:prog[i]%8])
			b.WriteString(quickFragments[int(prog[i+1])%len(quickFragments)])
			b.WriteByte('\n')
		}
		q, ok := quickDocument(b.Bytes())
		if !ok {
			return
		}
		if d := quickAgrees(b.Bytes(), q); d != "" {
			t.Fatalf("%s\n%s", d, b.Bytes())
		}
	})
}
