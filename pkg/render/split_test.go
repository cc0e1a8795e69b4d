package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
)

func kinds(docs []render.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Object.Kind+"/"+d.Object.Name)
	}
	return out
}

func TestSplitDocuments(t *testing.T) {
	const in = `# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
---
# a document of comments only
# more
---

---
...
---
apiVersion: v1
kind: Secret
metadata:
  name: b
--- # a comment on the marker
apiVersion: v1
kind: Service
metadata:
  name: c
---
`
	docs, err := render.SplitDocuments("f.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kinds(docs), " "); got != "ConfigMap/a Secret/b Service/c" {
		t.Fatalf("documents %s", got)
	}
	for i, want := range []int{1, 15, 20} {
		if docs[i].Line != want || docs[i].File != "f.yaml" {
			t.Errorf("document %d at %s:%d, want f.yaml:%d", i, docs[i].File, docs[i].Line, want)
		}
	}
	if docs[0].Object.Namespace != "ns" || docs[0].Object.APIVersion != "v1" {
		t.Errorf("object %+v", docs[0].Object)
	}
	// Raw keeps the author's bytes, ending in a newline.
	if want := "# leading comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"; string(docs[0].Raw) != want {
		t.Errorf("raw %q, want %q", docs[0].Raw, want)
	}
	for _, d := range docs {
		if !strings.HasSuffix(string(d.Raw), "\n") {
			t.Errorf("%s: raw does not end in a newline: %q", d.Object.Name, d.Raw)
		}
	}
	// YAML() joins them into a stream that splits back into the same.
	res := &render.Result{Documents: docs}
	again, err := render.SplitDocuments("again.yaml", res.YAML())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(kinds(again), " ") != strings.Join(kinds(docs), " ") {
		t.Errorf("YAML() splits into %v", kinds(again))
	}
}

func TestSplitDocumentsEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "# only a comment\n", "---\n---\n", "# a\n---\n# b\n", "   \n\t\n", "...\n"} {
		docs, err := render.SplitDocuments("f.yaml", []byte(in))
		if err != nil || len(docs) != 0 {
			t.Errorf("%q: %d documents, %v; want none", in, len(docs), err)
		}
	}
}

// spec/addon-v1.md section 6.4: "drop empty documents (nothing but white
// space, comments or null)", as kubectl does.
func TestSplitDocumentsDropsNull(t *testing.T) {
	for _, in := range []string{"null\n", "~\n", "---\nnull\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "# c\nnull # c\n"} {
		docs, err := render.SplitDocuments("f.yaml", []byte(in))
		if err != nil {
			t.Errorf("%q: %v; a null document is empty and must be dropped", in, err)
			continue
		}
		for _, d := range docs {
			if d.Object.Kind != "ConfigMap" {
				t.Errorf("%q: kept %+v", in, d.Object)
			}
		}
	}
}

func TestSplitDocumentsJSON(t *testing.T) {
	docs, err := render.SplitDocuments("x.json", []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Written as YAML, as kustomize writes it: kubectl reads a stream
	// that begins with "{" as JSON, and stops after one document.
	const want = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: j\n"
	if len(docs) != 1 || docs[0].Object.Name != "j" || string(docs[0].Raw) != want {
		t.Errorf("JSON document: %+v, want Raw %q", docs, want)
	}
}

func TestSplitDocumentsCRLF(t *testing.T) {
	in := strings.ReplaceAll("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", "\n", "\r\n")
	docs, err := render.SplitDocuments("f.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kinds(docs), " "); got != "ConfigMap/a ConfigMap/b" {
		t.Errorf("documents %s", got)
	}
}

// A "---" inside a block scalar is content, not a document marker.
func TestSplitDocumentsMarkerInBlockScalar(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  script: |\n    echo a\n    ---\n    echo b\n"
	docs, err := render.SplitDocuments("f.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || string(docs[0].Raw) != in {
		t.Errorf("got %d documents: %q", len(docs), kinds(docs))
	}
}

// Errors say FILE:LINE, the line being the file's, not the document's.
func TestSplitDocumentsErrors(t *testing.T) {
	const ok = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\n" // 5 lines
	for _, tc := range []struct {
		name, in, want string
	}{
		{"syntax", ok + "a: [1, 2\n", "dir/f.yaml:6: "},
		{"syntax deeper in the document", ok + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   bad: indent\n", "dir/f.yaml:10: "},
		{"unterminated string", ok + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"x\n", "dir/f.yaml:9: "},
		{"no kind", ok + "apiVersion: v1\nmetadata:\n  name: x\n", "dir/f.yaml:6: invalid manifest: document has no kind"},
		{"no apiVersion", ok + "# comment\nkind: ConfigMap\nmetadata:\n  name: x\n", "dir/f.yaml:6: invalid manifest: document has no apiVersion"},
		{"no name", ok + "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "dir/f.yaml:6: invalid manifest: ConfigMap has no metadata.name"},
		{"generateName", "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n", "dir/f.yaml:1: invalid manifest: Job has metadata.generateName but no metadata.name: an add-on's objects are applied by name, as kubectl apply applies them"},
		{"not a mapping", ok + "- a\n- b\n", "dir/f.yaml:6: invalid manifest: document is not a mapping"},
		{"scalar", ok + "hello\n", "dir/f.yaml:6: invalid manifest"},
		{"unknown alias", ok + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: *nope\n", "dir/f.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render.SplitDocuments("dir/f.yaml", []byte(tc.in))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, render.ErrInvalid) {
				t.Errorf("%v: not ErrInvalid", err)
			}
			var re *render.Error
			if !errors.As(err, &re) || re.File != "dir/f.yaml" || re.Line < 1 {
				t.Errorf("%v: want a *render.Error with file and line", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want prefix %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q has more than one line", err)
			}
		})
	}
}

// A List is its items (spec/addon-v1.md, section 6.4): an empty one is
// nothing, a nested one is flattened, an item is an object like any
// document, and a kind that ends in "List" without items needs a name.
func TestSplitDocumentsList(t *testing.T) {
	for _, c := range []struct {
		name, in, want, err string
	}{
		{"empty", "apiVersion: v1\nkind: List\nitems: []\n", "", ""},
		{"null items", "apiVersion: v1\nkind: List\nitems:\n", "", ""},
		{"items", "apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: n\n", "ConfigMap/a Namespace/n", ""},
		{"nested", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMapList\n  items:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n", "ConfigMap/a", ""},
		{"JSON", `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}]}`, "ConfigMap/j", ""},
		{"item without a name", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n", "", "f.yaml:4: an item of a List: invalid manifest: ConfigMap has no metadata.name"},
		{"items not a list", "apiVersion: v1\nkind: List\nitems: a\n", "", "f.yaml:1: invalid manifest: the items of a List are not a list"},
		{"a List kind without items", "apiVersion: v1\nkind: AllowList\nspec: {}\n", "", "f.yaml:1: invalid manifest: AllowList has no metadata.name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, err := render.SplitDocuments("f.yaml", []byte(c.in))
			if c.err != "" {
				if err == nil || err.Error() != c.err || !errors.Is(err, render.ErrInvalid) {
					t.Errorf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(kinds(docs), " "); got != c.want {
				t.Errorf("documents %q, want %q", got, c.want)
			}
			for _, d := range docs {
				if strings.HasPrefix(string(d.Raw), "{") || !strings.HasPrefix(string(d.Raw), "apiVersion: v1\n") {
					t.Errorf("item written as %q: want block YAML", d.Raw)
				}
			}
		})
	}
}

// The images of a workload are those the API server receives, whose
// decoders expand aliases and merge keys: an image behind either was
// missing from the inventory (so copy --with-images left it behind, and
// relocation neither rewrote nor reported it).
func TestImagesThroughAliasesAndMergeKeys(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"alias image", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  annotations: {x: &img hidden.example/a:1}
spec:
  template:
    spec:
      containers:
      - name: a
        image: *img
`, []string{"hidden.example/a:1"}},
		{"merge key, flow", `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - <<: {image: hidden.example/b:1}
    name: b
`, []string{"hidden.example/b:1"}},
		{"merge key, block, overridden", `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: c
    image: shown.example/c:1
    <<:
      image: ignored.example/c:1
`, []string{"shown.example/c:1"}},
		{"aliased pod template", `apiVersion: batch/v1
kind: CronJob
metadata:
  name: c
  annotations:
    t: &t
      spec:
        containers: [{name: a, image: hidden.example/d:1}]
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template: *t
`, []string{"hidden.example/d:1"}},
		{"aliased kind", `apiVersion: apps/v1
kind: &k DaemonSet
metadata: {name: d, labels: {k: *k}}
spec:
  template:
    spec:
      containers: &c
      - {name: a, image: hidden.example/e:1}
      ephemeralContainers: *c
`, []string{"hidden.example/e:1"}},
		{"List item", `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p, annotations: {i: &i hidden.example/f:1}}
  spec: {containers: [{name: a, image: *i}]}
`, []string{"hidden.example/f:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := render.SplitDocuments("f.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 1 || strings.Join(docs[0].Images, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("images = %v, want %v", docs[0].Images, tc.want)
			}
			// The document's text is what the author wrote.
			if tc.name != "List item" && string(docs[0].Raw) != tc.doc {
				t.Errorf("the text changed:\n%s", docs[0].Raw)
			}
		})
	}
}

// go-yaml's lookups read the first of two keys, the API server's
// decoders the last. A key of an object's identity written twice is
// refused; the images of every duplicate along the pod spec path are
// listed (the fast path's answer too). Before, a ConfigMap then Pod
// document was listed as a ConfigMap without images and applied as a
// Pod, and an image in a second template: was missing from the
// inventory.
func TestDuplicateKeys(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"kind", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\nkind: Pod\nspec:\n  containers:\n  - {name: a, image: hidden.example/a:1}\n", "two kind keys"},
		{"apiVersion", "apiVersion: apps/v1\n" + pod, "two apiVersion keys"},
		{"metadata", pod + "metadata: {name: q}\n", "two metadata keys"},
		{"name", pod + "  name: q\n", "two metadata.name keys"},
		{"namespace", pod + "  namespace: a\n  namespace: b\n", "two metadata.namespace keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render.SplitDocuments("f.yaml", []byte(tc.doc))
			if !errors.Is(err, render.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// The same value written twice is read alike either way, and kubectl
	// (sigs.k8s.io/yaml, the last of them) takes it: it is not refused.
	for _, tc := range []struct{ name, doc string }{
		{"same namespace", pod + "  namespace: a\n  namespace: a\n"},
		{"same kind", "apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata:\n  name: p\n"},
		{"same metadata", pod + "metadata:\n  name: p\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := render.SplitDocuments("f.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if o := docs[0].Object; o.Kind != "Pod" || o.Name != "p" {
				t.Errorf("object %+v, want the Pod p", o)
			}
		})
	}
	for _, tc := range []struct{ name, doc string }{
		{"block", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: shown.example/a:1}\n  template:\n    spec:\n      containers:\n      - name: a\n        image: hidden.example/a:1\n"},
		{"flow", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: shown.example/a:1}\n      containers: [{name: a, image: hidden.example/a:1}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := render.SplitDocuments("f.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(docs[0].Images, ","); got != "hidden.example/a:1,shown.example/a:1" {
				t.Errorf("images = %s, want both", got)
			}
		})
	}
}
