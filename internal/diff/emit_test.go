package diff

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// emitShapes are the shapes where the emitter looks at more than a node:
// empty collections (flow), keys it cannot write plain (long, multi-line,
// quoted, not scalars), block scalars with blank lines and leading
// spaces, nested sequences, explicit tags, aliases.
var emitShapes = []string{
	"a: {}\nb: []\nc:\n  d: {}\n  e: []\n",
	"? " + strings.Repeat("k", 200) + "\n: v\nshort:\n  x: 1\n",
	"\"multi\\nline key\":\n  a: 1\n  b: 2\n",
	"? [a, b]\n: flow key\n? {a: 1}\n: map key\nz:\n  y: 1\n",
	"s: |\n  one\n\n  three\n    indented\n\nt: |2\n    leading spaces\n  back\nu: |-\n  no newline\n",
	"list:\n- - a\n  - b\n- - c\n- x: 1\n  y:\n  - 2\n  - 3\n- []\n- {}\n",
	"tagged: !custom\n  a: 1\nseq: !other\n- 1\nmap: !!map\n  b: 2\nstr: !!str 3\n",
	"base: &b\n  x: 1\n  y: [1, 2]\nuse: *b\nlist:\n- *b\n- *b\n",
	"'on': yes\n\"y\": n\n\"123\": x\n\"\": empty key\n\"a: b\": colon\n\"- x\": dash\nnull: ~\nn2:\n",
	"deep:\n  a:\n    b:\n      c:\n        d:\n        - e: f\n          g: |\n            block\n            text\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a.b/c: \"true\"\ndata:\n  k: \"  padded  \"\n  t: \"tab\\there\"\n  u: \"ünïcode\"\n  long: " + strings.Repeat("word ", 100) + "\n",
	"- a\n- b:\n    c: d\n",
	"scalar at the root\n",
}

// corpus is every YAML document under the repository, and emitShapes.
func corpus(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs := append([]string(nil), emitShapes...)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == ".work") {
			return filepath.SkipDir
		}
		if d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 4<<20 {
			return nil
		}
		nodes, err := kio.FromBytes(b)
		if err != nil {
			return nil // not YAML kio reads: a template, a hostile vector
		}
		for _, n := range nodes {
			if s, err := n.String(); err == nil {
				docs = append(docs, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// Writing a normalized document in pieces gives what one Encode gives,
// with every collection that can be split split (splitNodes 1), and at
// the default.
func TestEmitMatchesString(t *testing.T) {
	docs := corpus(t)
	if len(docs) < 100 {
		t.Fatalf("only %d documents in the corpus", len(docs))
	}
	defer func(n int) { splitNodes = n }(splitNodes)
	for _, split := range []int{1, 3, splitNodes} {
		splitNodes = split
		bad := 0
		for _, doc := range docs {
			node, err := yaml.Parse(doc)
			if err != nil || node.IsNil() {
				continue
			}
			n := node.YNode()
			nz := &normalizer{budget: maxNodes}
			nz.node(n, 0, 0)
			if nz.budget < 0 {
				continue
			}
			want, err := yaml.String(n)
			if err != nil {
				continue
			}
			got, err := emit(n)
			if err != nil {
				t.Errorf("emit: %v\n%s", err, doc)
				continue
			}
			if got != want && bad < 3 {
				bad++
				t.Errorf("splitNodes %d: pieces differ from one Encode\n--- one Encode:\n%s\n--- pieces:\n%s", split, want, got)
			}
		}
	}
	t.Logf("%d documents", len(docs))
}

// FuzzEmitMatchesString holds emit to yaml.String on any document,
// every collection split.
func FuzzEmitMatchesString(f *testing.F) {
	for _, s := range emitShapes {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		node, err := yaml.Parse(doc)
		if err != nil || node.IsNil() {
			return
		}
		n := node.YNode()
		nz := &normalizer{budget: maxNodes}
		nz.node(n, 0, 0)
		if nz.budget < 0 {
			return
		}
		want, err := yaml.String(n)
		if err != nil {
			return
		}
		defer func(n int) { splitNodes = n }(splitNodes)
		splitNodes = 1
		got, err := emit(n)
		if err != nil {
			t.Fatalf("emit: %v", err)
		}
		if got != want {
			t.Fatalf("pieces differ from one Encode\n--- one Encode:\n%q\n--- pieces:\n%q", want, got)
		}
	})
}
