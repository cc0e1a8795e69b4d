package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"unsafe"

	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// dropTextFiles is a plain-manifest tree with every shape of document a
// file can hold: several per file, each "---" variant and "...", JSON,
// CRLF line ends, a byte order mark, empty and comment-only documents, a
// last document without a final newline, and kinds that the apply order
// moves between files.
var dropTextFiles = map[string]string{
	"a/multi.yaml":  "# leading comment\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s1\n---\n---\n# only a comment\n---   # marker with a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n...\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n1\n",
	"a/nofinal.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c2\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sec",
	"b/crlf.yaml":   "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: s2\r\n",
	"b/doc.json":    `{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}`,
	"b/inline.yaml": "--- {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"inline\"}}\n--- \napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: registry.example/web:1\n",
	"bom.yaml":      "\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bom\n",
	"empty.yaml":    "",
	"z.yaml":        "---\n...\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: n1\n",
	"README.md":     "not a manifest\n",
}

// noReaderAt hides the io.ReaderAt of an fs.FS's files, so the text is
// read back through the whole-file path.
type noReaderAt struct{ fs.FS }

func (n noReaderAt) Open(name string) (fs.File, error) {
	f, err := n.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return struct{ fs.File }{f}, nil
}

func (n noReaderAt) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(n.FS, name) }

func memTree(t testing.TB, files map[string]string) *filetree.FS {
	t.Helper()
	return spilledTree(t, files, "")
}

// spilledTree is memTree with every file on disk in dir (filetree's
// SpillPast), unless dir is "".
func spilledTree(t testing.TB, files map[string]string, dir string) *filetree.FS {
	t.Helper()
	b := filetree.NewBuilder()
	if dir != "" {
		b.SpillPast(dir, 0)
	}
	for name, data := range files {
		if err := b.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b.FS()
}

func TestDropTextSameStream(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		fsys fs.FS
	}{
		{"mapfs", tree(dropTextFiles)},
		{"filetree", memTree(t, dropTextFiles)},
		{"filetree on disk", spilledTree(t, dropTextFiles, t.TempDir())},
		{"no ReaderAt", noReaderAt{tree(dropTextFiles)}},
	} {
		for _, mode := range []string{"Render", "Raw"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				run := func(opts render.Options) *render.Result {
					t.Helper()
					var (
						res *render.Result
						err error
					)
					if mode == "Render" {
						res, err = render.Render(ctx, tc.fsys, opts)
					} else {
						opts.Raw = true
						res, err = render.Render(ctx, tc.fsys, opts)
					}
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				want, got := run(render.Options{}), run(render.Options{DropText: true})
				if len(want.Documents) != 12 {
					t.Fatalf("%d documents, want 12", len(want.Documents))
				}
				var wbuf, gbuf bytes.Buffer
				if _, err := want.WriteTo(&wbuf); err != nil {
					t.Fatal(err)
				}
				n, err := got.WriteTo(&gbuf)
				if err != nil {
					t.Fatal(err)
				}
				if n != int64(gbuf.Len()) || !bytes.Equal(gbuf.Bytes(), wbuf.Bytes()) {
					t.Fatalf("DropText stream (n=%d):\n%s\nwant:\n%s", n, gbuf.Bytes(), wbuf.Bytes())
				}
				if !bytes.Equal(got.YAML(), wbuf.Bytes()) {
					t.Errorf("DropText YAML differs from the stream")
				}
				if !reflect.DeepEqual(got.Inventory(), want.Inventory()) {
					t.Errorf("inventory %+v, want %+v", got.Inventory(), want.Inventory())
				}
				for i, d := range got.Documents {
					w := want.Documents[i]
					if d.Raw != nil {
						t.Errorf("%s:%d: Raw kept", d.File, d.Line)
					}
					text, err := got.Text(d)
					if err != nil || !bytes.Equal(text, w.Raw) {
						t.Errorf("%s:%d: Text %q (%v), want %q", d.File, d.Line, text, err, w.Raw)
					}
					w.Raw = nil
					if !reflect.DeepEqual(d, w) {
						t.Errorf("document %d: %+v, want %+v", i, d, w)
					}
				}
			})
		}
	}
}

// TestDropTextOffsets: a document's Offset and Length locate its Raw in
// the file, with or without DropText.
func TestDropTextOffsets(t *testing.T) {
	res, err := render.Render(context.Background(), tree(dropTextFiles), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Documents {
		text := dropTextFiles[d.File][d.Offset : d.Offset+d.Length]
		if jsonText([]byte(text)) {
			// JSON is written as YAML: the text is the JSON, Raw its YAML.
			if strings.HasPrefix(string(d.Raw), "{") || !strings.Contains(string(d.Raw), "name: "+d.Object.Name+"\n") {
				t.Errorf("%s:%d: JSON %q, Raw %q: want block YAML", d.File, d.Line, text, d.Raw)
			}
			continue
		}
		if raw := string(d.Raw); raw != text && raw != text+"\n" {
			t.Errorf("%s:%d: [%d:+%d] is %q, Raw %q", d.File, d.Line, d.Offset, d.Length, text, raw)
		}
	}
}

func TestDropTextKustomizeKeepsRaw(t *testing.T) {
	files := map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	}
	res, err := render.Render(context.Background(), tree(files), render.Options{DropText: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Documents) != 1 || res.Documents[0].Raw == nil {
		t.Fatalf("kustomize documents %+v: want their Raw", res.Documents)
	}
	if got, want := string(res.YAML()), files["cm.yaml"]; got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
}

// TestDropTextTreeChanged: a tree that lost a file or bytes since the
// render is an error naming the file, never a silently short stream.
func TestDropTextTreeChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(fstest.MapFS)
	}{
		{"removed", func(m fstest.MapFS) { delete(m, "a/multi.yaml") }},
		{"truncated", func(m fstest.MapFS) { m["a/multi.yaml"].Data = m["a/multi.yaml"].Data[:40] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tree(dropTextFiles)
			res, err := render.Render(context.Background(), m, render.Options{DropText: true})
			if err != nil {
				t.Fatal(err)
			}
			tc.change(m)
			_, err = res.WriteTo(&bytes.Buffer{})
			var re *render.Error
			if !errors.As(err, &re) || re.File != "a/multi.yaml" {
				t.Fatalf("WriteTo: %v, want an error naming a/multi.yaml", err)
			}
		})
	}
}

func TestWriteToWithoutText(t *testing.T) {
	res := &render.Result{Documents: []render.Document{{File: "a.yaml", Line: 1, Length: 10}}}
	if _, err := res.WriteTo(&bytes.Buffer{}); !errors.Is(err, render.ErrNoText) {
		t.Fatalf("WriteTo: %v, want ErrNoText", err)
	}
}

// TestDropTextLetsFilesGo: with DropText, the documents of a render hold
// nothing of the files' bytes once the render returns.
func TestDropTextLetsFilesGo(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("cm%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  k: v\n", i)
	}
	m := tree(files)
	res, err := render.Render(context.Background(), m, render.Options{DropText: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Documents {
		data := m[d.File].Data
		for _, s := range []string{d.File, d.Object.Name, d.Object.Kind} {
			if len(s) > 0 && len(data) > 0 && overlaps(s, data) {
				t.Fatalf("%s: document field %q points into the file's bytes", d.File, s)
			}
		}
	}
}

// overlaps reports whether s's bytes lie inside b.
func overlaps(s string, b []byte) bool {
	sp := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	bp := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return sp >= bp && sp < bp+uintptr(len(b))
}

// kustomize reads a tree whose files are on disk (a spilled unpack) as it
// reads one in memory.
func TestKustomizeFromDisk(t *testing.T) {
	files := map[string]string{
		"kustomization.yaml": "namePrefix: p-\nresources:\n- base/cm.yaml\n- svc.yaml\npatches:\n- path: patch.yaml\n",
		"base/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n",
		"svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n",
		"patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: patched\n",
	}
	want, err := render.Render(context.Background(), memTree(t, files), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := render.Render(context.Background(), spilledTree(t, files, t.TempDir()), render.Options{DropText: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := string(got.YAML()), string(want.YAML()); g != w || !strings.Contains(g, "patched") {
		t.Errorf("from disk:\n%s\nin memory:\n%s", g, w)
	}
}
