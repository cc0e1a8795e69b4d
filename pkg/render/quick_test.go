package render

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// quickAgrees says how the slow path (parseDocument, objectOf, imagesOf)
// disagrees with what the fast path found in a document it accepted, or "".
func quickAgrees(text []byte, q quickDoc) string {
	node, err := parseDocument(text)
	if err != nil {
		return fmt.Sprintf("the fast path accepted it, the slow path says: %v", err)
	}
	if node == nil || q.empty {
		if (node == nil) != q.empty {
			return fmt.Sprintf("empty: fast path %v, slow path %v", q.empty, node == nil)
		}
		return ""
	}
	obj, err := objectOf(node)
	if err != nil {
		return fmt.Sprintf("the fast path found %+v, the slow path says: %v", q.obj, err)
	}
	if obj != q.obj {
		return fmt.Sprintf("object: fast path %+v, slow path %+v", q.obj, obj)
	}
	if images := imagesOf(node); !reflect.DeepEqual(images, q.images) {
		return fmt.Sprintf("images: fast path %q, slow path %q", q.images, images)
	}
	return ""
}

const quickHead = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"

var quickCM = addon.Object{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}

// quickPod starts a Pod; its pod spec's fields follow, indented by two.
const quickPod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"

var quickPodObj = addon.Object{APIVersion: "v1", Kind: "Pod", Name: "p"}

func TestQuickDocumentAccepts(t *testing.T) {
	deploy := addon.Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "d"}
	for _, tc := range []struct {
		name, in string
		want     quickDoc
	}{
		{"empty", "", quickDoc{empty: true}},
		{"blank lines", "\n   \n\n", quickDoc{empty: true}},
		{"comments", "# a\n  # b\n#\n", quickDoc{empty: true}},
		{"config map", quickHead, quickDoc{obj: quickCM}},
		{"no final newline", strings.TrimSuffix(quickHead, "\n"), quickDoc{obj: quickCM}},
		{"namespace and labels", "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    app: x\n  namespace: kube-system\n  name: svc\n",
			quickDoc{obj: addon.Object{APIVersion: "v1", Kind: "Service", Namespace: "kube-system", Name: "svc"}}},
		{"quoted identity", "'apiVersion': 'v1'\n\"kind\": \"ConfigMap\"\nmetadata:\n  name: \"a\"\n  namespace: ''\n", quickDoc{obj: quickCM}},
		{"identity with comments", "apiVersion: v1 # c\nkind: ConfigMap   # c\nmetadata: # c\n  # c\n  name: a\n", quickDoc{obj: quickCM}},
		{"List kind with a name", "apiVersion: v1\nkind: List\nmetadata:\n  name: l\n",
			quickDoc{obj: addon.Object{APIVersion: "v1", Kind: "List", Name: "l"}}},
		{"nested metadata is not the object's", quickHead + "spec:\n  metadata:\n    name: other\n    namespace: x\n", quickDoc{obj: quickCM}},
		{"plain scalars", quickHead + "data:\n  a: b c  d\n  u: http://x:80/y#z\n  n: -1\n  x: -Xmx1g\n  q: a'b\"c\n  e: \n", quickDoc{obj: quickCM}},
		{"multi-line plain", quickHead + "data:\n  a: one\n    two\n\n    three - \"four\" [five]\n  b: c\n", quickDoc{obj: quickCM}},
		{"quoted scalars", quickHead + "data:\n  a: 'it''s'\n  b: \"x\\\"y\\n\\t\\\\\\u00e9\\x41\\U0001F600\"\n  c: \"\"\n  d: 'a # b'\n", quickDoc{obj: quickCM}},
		{"multi-line quoted", quickHead + "data:\n  a: \"one\n    two\n\n    three\" # c\n  b: 'x\n   y'\n  c: \"a\\\n    b\"\n", quickDoc{obj: quickCM}},
		{"block scalars", quickHead + "data:\n  a: |\n    x\n\n      y\n    # not a comment\n  b: >-\n    x\n  c: |+ # c\n\n  d: |\n  e: >\n\n    x\n", quickDoc{obj: quickCM}},
		{"block scalar with tabs", quickHead + "data:\n  Makefile: |\n    all:\n    \techo a\n", quickDoc{obj: quickCM}},
		{"non-ASCII", quickHead + "data:\n  a: café “quoted” 日本\n", quickDoc{obj: quickCM}},
		{"flow collections", quickHead + "rules:\n- apiGroups: [\"\"]\n  resources: [pods, \"nodes\", 'x/y']\n  verbs: [ get, list ]\n  x: []\n  y: {}\n  z: [ ]\n", quickDoc{obj: quickCM}},
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n        image: busybox:1\n      containers:\n      - name: a\n        image: \"reg/a:1\" # c\n        args:\n        - --x=:80\n        - -v\n      -   name: b\n          image: reg/b@sha256:0\n      - image: reg/a:1\n      ephemeralContainers: []\n",
			quickDoc{obj: deploy, images: []string{"busybox:1", "reg/a:1", "reg/b@sha256:0"}}},
		{"indented containers", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  template:\n    spec:\n      containers:\n        -\n          image: x\n        - name: y\n          image:\n        - image: ''\n        - image: ~\n",
			quickDoc{obj: deploy, images: []string{"x", "~"}}},
		{"image outside a container", quickHead + "spec:\n  image: no\n  containers:\n  - name: a\n    spec:\n      image: no\n", quickDoc{obj: quickCM}},
		{"containers not a sequence", quickHead + "spec:\n  containers:\n    image: no\n", quickDoc{obj: quickCM}},
		{"nested sequences", quickPod + "  containers:\n  -\n    - image: nested\n", quickDoc{obj: quickPodObj}},
		// Spec 6.2: the pod specs of the workload kinds only.
		{"containers of a ConfigMap", quickHead + "spec:\n  containers:\n  - image: cm\n", quickDoc{obj: quickCM}},
		{"containers outside the pod spec", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  containers:\n  - image: no\n  template:\n    spec:\n      initContainers:\n      - image: yes\n", quickDoc{obj: deploy, images: []string{"yes"}}},
		{"a custom kind named Deployment", "apiVersion: example.com/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - image: no\n", quickDoc{obj: addon.Object{APIVersion: "example.com/v1", Kind: "Deployment", Name: "d"}}},
		{"a CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - image: cron\n", quickDoc{obj: addon.Object{APIVersion: "batch/v1", Kind: "CronJob", Name: "c"}, images: []string{"cron"}}},
		{"a Pod", quickPod + "  ephemeralContainers:\n  - image: debug\n", quickDoc{obj: quickPodObj, images: []string{"debug"}}},
		{"indentless sequence in a compact mapping", quickHead + "spec:\n- k:\n  - a\n  - b\n  j: c\n- d\n", quickDoc{obj: quickCM}},
		{"duplicate keys elsewhere", quickHead + "data:\n  a: 1\n  a: 2\n", quickDoc{obj: quickCM}},
		{"null items and values", quickHead + "spec:\n  a:\n  b:\n  - \n  -\n  - # c\n", quickDoc{obj: quickCM}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, ok := quickDocument([]byte(tc.in))
			if !ok {
				t.Fatalf("fell back on\n%s", tc.in)
			}
			if !reflect.DeepEqual(q, tc.want) {
				t.Errorf("got %+v, want %+v", q, tc.want)
			}
			if d := quickAgrees([]byte(tc.in), q); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestQuickDocumentFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		// invalid: the slow path refuses it, so the fast path must not
		// accept it. Otherwise it is valid (or empty) but outside the
		// subset.
		invalid bool
	}{
		// kubectl reads any document with items as a list: only a List
		// (the slow path) may hold them.
		{"items of a ConfigMap", quickHead + "items:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n", true},
		{"items of a List", "apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems: []\n", true},
		// YAML errors, deep in the document.
		{"mapping value in a value", quickHead + "spec:\n  a: b: c\n", true},
		{"bad indentation", quickHead + "spec:\n  a: 1\n   b: 2\n", true},
		{"less indentation", quickHead + "spec:\n    a: 1\n  b: 2\n", true},
		{"sequence in a mapping", quickHead + "spec:\n  a: 1\n  - b\n", true},
		{"key in a sequence", quickHead + "spec:\n  - a\n  b: 1\n", true},
		{"sequence after a value", quickHead + "spec: - a\n", true},
		{"unterminated double quote", quickHead + "data:\n  a: \"x\n", true},
		{"unterminated single quote", quickHead + "data:\n  a: 'x\n  b: y\n", true},
		{"text after a quote", quickHead + "data:\n  a: \"x\" y\n", true},
		{"comment after a quote without a space", quickHead + "data:\n  a: \"x\"#c\n", false},
		{"bad escape", quickHead + "data:\n  a: \"\\/\"\n", true},
		{"bad hex escape", quickHead + "data:\n  a: \"\\x4g\"\n", true},
		{"surrogate escape", quickHead + "data:\n  a: \"\\ud800\"\n", true},
		{"reserved @", quickHead + "data:\n  a: @x\n", true},
		{"reserved backquote", quickHead + "data:\n  a: `x`\n", true},
		{"tab indentation", quickHead + "data:\n\ta: x\n", true},
		{"tab in a block scalar's indentation", quickHead + "data:\n  a: |\n\tx\n", true},
		{"tab after a value", quickHead + "data:\n  a: x\t\n", false},
		{"comment inside a plain scalar", quickHead + "data:\n  a: x\n# c\n    y\n", true},
		{"continuation after a comment", quickHead + "data:\n  a: x # c\n    y\n", true},
		{"implicit key over two lines", quickHead + "data:\n  a: x\n    y: z\n", true},
		{"block scalar header text", quickHead + "data:\n  a: | x\n    y\n", true},
		{"block scalar indentation 0", quickHead + "data:\n  a: |0\n    y\n", true},
		{"block scalar, blank line over-indented", quickHead + "data:\n  a: |\n      \n    y\n", true},
		{"unclosed flow sequence", quickHead + "data:\n  a: [x, y\n", true},
		{"flow sequence, trailing text", quickHead + "data:\n  a: [x] y\n", true},
		{"key too long", quickHead + strings.Repeat("k", 1100) + ": v\n", true},
		{"control character", quickHead + "data:\n  a: \x01\n", true},
		{"DEL", quickHead + "data:\n  a: \x7f\n", true},
		{"NUL", quickHead + "data:\n  a: \x00\n", true},
		{"invalid UTF-8", quickHead + "data:\n  a: \xff\n", true},
		{"non-character", quickHead + "data:\n  a: \uffff\n", true},
		{"document end inside", quickHead + "... x\n", false},
		{"not a mapping", "- a\n", true},
		{"scalar document", "hello\n", true},
		{"indented root", "  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n", false},
		// Not objects.
		{"no apiVersion", "kind: ConfigMap\nmetadata:\n  name: a\n", true},
		{"no name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", true},
		{"null name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name:\n", true},
		{"null kind", "apiVersion: v1\nkind: ~\nmetadata:\n  name: a\n", true},
		{"empty quoted kind", "apiVersion: v1\nkind: ''\nmetadata:\n  name: a\n", true},
		{"mapping as apiVersion", "apiVersion:\n  a: b\nkind: X\nmetadata:\n  name: a\n", true},
		{"metadata a scalar", "apiVersion: v1\nkind: X\nmetadata: a\n", true},
		{"metadata a sequence", "apiVersion: v1\nkind: X\nmetadata:\n- name: a\n", true},
		// Valid, but outside the subset.
		{"List without a name", "apiVersion: v1\nkind: List\nitems: []\n", true}, // the slow path flattens it
		{"null document", "null\n", false},
		{"anchor and alias", quickHead + "data:\n  a: &x y\n  b: *x\n", false},
		{"tag", quickHead + "data:\n  a: !!str 1\n", false},
		{"directive", "%YAML 1.2\n" + quickHead, true}, // a chunk has no "---"
		{"complex key", quickHead + "? a\n: b\n", false},
		{"merge key", quickHead + "data:\n  <<:\n    a: b\n", false},
		{"CRLF", strings.ReplaceAll(quickHead, "\n", "\r\n"), false},
		{"BOM", "\ufeff" + quickHead, false},
		{"flow mapping", quickHead + "data: {a: b}\n", false},
		{"nested flow", quickHead + "data:\n  a: [[x]]\n", false},
		{"multi-line flow", quickHead + "data:\n  a: [x,\n    y]\n", false},
		{"explicit indentation", quickHead + "data:\n  a: |2\n    y\n", false},
		{"duplicate name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", true},
		{"duplicate kind", "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: a\n", true},
		{"numeric name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 0123\n", false},
		{"boolean name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yes\n", false},
		{"escaped name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a\\u0062\"\n", false},
		{"multi-line name", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n    b\n", false},
		{"block scalar image", quickPod + "  containers:\n  - image: |\n      x\n", false},
		{"kind after the pod spec", "apiVersion: v1\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: x\nkind: Pod\n", false},
		{"nested sequence entry", quickHead + "data:\n- - a\n", false},
		{"key with a space before its colon", quickHead + "data :\n  a: b\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := quickDocument([]byte(tc.in)); ok {
				t.Fatalf("accepted\n%s", tc.in)
			}
			node, err := parseDocument([]byte(tc.in))
			if err == nil && node != nil {
				_, err = objectOf(node)
			}
			if tc.invalid && err == nil {
				t.Errorf("the slow path accepts it: the case tests nothing")
			}
			if !tc.invalid && err != nil {
				t.Errorf("the slow path refuses it (%v): mark the case invalid", err)
			}
		})
	}
}

// quickCoverageExceptions are the documents of examples/ that the fast
// path leaves to the slow path, by FILE:LINE, with the reason.
var quickCoverageExceptions = map[string]string{}

// TestQuickDocumentCoverage: the fast path must read (nearly) every real
// document, or it saves nothing. Every document of examples/ that is an
// object is read, except the listed ones; what it reads agrees with the
// slow path.
func TestQuickDocumentCoverage(t *testing.T) {
	for _, root := range []string{"../../examples", "testdata"} {
		var objects, fast int
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, c := range splitYAML(b) {
				where := fmt.Sprintf("%s:%d", filepath.ToSlash(p), c.line)
				q, ok := quickDocument(c.text)
				if ok {
					if d := quickAgrees(c.text, q); d != "" {
						t.Errorf("%s: %s", where, d)
					}
				}
				node, err := parseDocument(c.text)
				if err == nil && node != nil {
					_, err = objectOf(node)
				}
				if err != nil || node == nil {
					continue // not an object (a kustomization, a patch) or empty
				}
				objects++
				if ok {
					fast++
				}
				_, listed := quickCoverageExceptions[where]
				if !ok && !listed {
					t.Errorf("%s: the fast path falls back on this object", where)
				}
				if ok && listed {
					t.Errorf("%s: the fast path reads this listed exception: unlist it", where)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: the fast path reads %d of %d objects", root, fast, objects)
	}
}

// The fast path takes the same documents to SplitDocuments as the slow one.
func TestSplitDocumentsFastPathSameDocuments(t *testing.T) {
	in := []byte("# c\n" + quickHead + "---\n\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - image: b\n      - image: a\n---\n" + quickHead + "data: !!str x\n")
	docs, err := SplitDocuments("f.yaml", in)
	if err != nil {
		t.Fatal(err)
	}
	// Offset and Length: where each Raw is in the input.
	d2 := int64(len("# c\n" + quickHead + "---\n\n---\n"))
	d3 := int64(len(in) - len(quickHead+"data: !!str x\n"))
	want := []Document{
		{File: "f.yaml", Line: 1, Length: int64(len("# c\n" + quickHead)), Raw: []byte("# c\n" + quickHead), Object: quickCM},
		{File: "f.yaml", Line: 9, Offset: d2, Length: d3 - d2 - 4, Raw: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - image: b\n      - image: a\n"),
			Object: addon.Object{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}, Images: []string{"a", "b"}},
		{File: "f.yaml", Line: 20, Offset: d3, Length: int64(len(in)) - d3, Raw: []byte(quickHead + "data: !!str x\n"), Object: quickCM}, // the slow path's
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("got %+v\nwant %+v", docs, want)
	}
	if !slices.EqualFunc(docs, want, func(a, b Document) bool { return string(a.Raw) == string(b.Raw) }) {
		t.Error("raw differs")
	}
}
