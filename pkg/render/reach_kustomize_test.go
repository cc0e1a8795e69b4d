package render

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"unicode/utf16"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// kustomizeReads runs kustomize over fsys as a render does and returns
// the files it read, whatever it then made of them.
func kustomizeReads(fsys fstest.MapFS) []string {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	openapi.ResetOpenAPI()
	defer openapi.ResetOpenAPI()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	var read readFiles
	_, _ = krusty.MakeKustomizer(opts).Run(treeFS{fsys: fsys, read: &read}, "/")
	return read.names
}

// The walk of the kustomization graph reaches every file kustomize reads,
// whichever way a kustomization or a configuration is written: in
// another file name, in JSON, as several documents, with a byte order
// mark, duplicate or differently cased keys, tags, merge keys, a path
// through "..", and keys written as !!binary, which kustomize decodes
// (a PatchTransformer's path key in base64 named a file the walk did not
// reach). kustomize itself is the judge: each tree is run through it
// and the files it read are compared with the walk's.
func TestWalkReachesWhatKustomizeReads(t *testing.T) {
	const cm2 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\ndata:\n  a: b\n"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for name, files := range map[string]map[string]string{
		"kustomization.yml":         {"kustomization.yml": "resources: [h.yaml]\n"},
		"Kustomization":             {"Kustomization": "resources: [h.yaml]\n"},
		"JSON":                      {"kustomization.yaml": `{"resources": ["cm.yaml", "h.yaml"]}`},
		"two documents":             {"kustomization.yaml": "resources: [h.yaml]\n---\nresources: [cm.yaml]\n"},
		"comment, then a document":  {"kustomization.yaml": "# c\n---\nresources: [h.yaml]\n"},
		"byte order mark":           {"kustomization.yaml": "\ufeffresources: [cm.yaml, h.yaml]\n"},
		"UTF-16":                    {"kustomization.yaml": "\xff\xfer\x00e\x00s\x00o\x00u\x00r\x00c\x00e\x00s\x00:\x00 \x00[\x00h\x00.\x00y\x00a\x00m\x00l\x00]\x00\n\x00"},
		"duplicate key":             {"kustomization.yaml": "resources: [cm.yaml]\nresources: [h.yaml]\n"},
		"field in two cases":        {"kustomization.yaml": "Resources: [h.yaml]\nRESOURCES: [cm.yaml]\n"},
		"!!str":                     {"kustomization.yaml": "!!str resources: [!!str h.yaml]\n"},
		"merge keys":                {"kustomization.yaml": "<<: [{resources: [h.yaml]}, {resources: [cm.yaml]}]\n"},
		"binary key":                {"kustomization.yaml": "? !!binary " + b64("resources") + "\n: [cm.yaml, h.yaml]\n"},
		"binary path":               {"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: !!binary " + b64("h.yaml") + "\n"},
		"path out and back":         {"kustomization.yaml": "resources: [sub/../../h.yaml]\n"},
		"tab after the key":         {"kustomization.yaml": "resources:\t[h.yaml]\n"},
		"key=path generator source": {"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  files: [k=h.yaml]\n"},
		"binary path key in a configuration": {
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
			"t.yaml":             "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\n? !!binary " + b64("path") + "\n: h.yaml\ntarget: {kind: ConfigMap}\n",
		},
		"apiVersion builtin in escapes": {
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
			"t.yaml":             "apiVersion: \"b\\u0075iltin\"\nkind: PatchTransformer\nmetadata: {name: p}\npath: h.yaml\ntarget: {kind: ConfigMap}\n",
		},
		"configuration in UTF-16": {
			"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
			"t.yaml":             utf16LE("apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: h.yaml\ntarget: {kind: ConfigMap}\n"),
		},
		"binary files key in a configuration": {
			"kustomization.yaml": "resources: [cm.yaml]\ngenerators: [g.yaml]\n",
			"g.yaml":             "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g}\n? !!binary " + b64("files") + "\n: [h.yaml]\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			files["cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
			files["h.yaml"] = cm2
			for n, s := range files {
				fsys[n] = &fstest.MapFile{Data: []byte(s), Mode: 0o644}
			}
			read := kustomizeReads(fsys)
			if !slices.Contains(read, "h.yaml") {
				t.Fatalf("kustomize read %v, not h.yaml: the case tests nothing", read)
			}
			g := walkKustomizations(fsys)
			for _, name := range read {
				if !g.reaches(name) {
					t.Errorf("kustomize read %s; the walk did not reach it", name)
				}
			}
		})
	}
}

// utf16LE is s in UTF-16, little-endian, after its byte order mark.
func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range utf16.Encode([]rune(s)) {
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

// A builtin configuration need not hold the word builtin in its bytes:
// its apiVersion may be written with escapes, or the file in UTF-16,
// and kustomize reads both as builtin. Such a configuration was not
// looked at, and kustomize fetched its remote path.
func TestBuiltinConfigSpelledOtherwiseRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	}))
	defer srv.Close()
	cfg := "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: " + srv.URL + "/p.yaml\ntarget: {kind: ConfigMap}\n"
	for name, text := range map[string]string{
		"escapes": strings.Replace(cfg, "builtin", `"b\u0075iltin"`, 1),
		"UTF-16":  utf16LE(cfg),
	} {
		fsys := fstest.MapFS{
			"kustomization.yaml": {Data: []byte("resources: [cm.yaml]\ntransformers: [t.yaml]\n")},
			"cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")},
			"t.yaml":             {Data: []byte(text)},
		}
		if _, err := Render(t.Context(), fsys, Options{}); !errors.Is(err, ErrRemote) {
			t.Errorf("%s: err = %v; want ErrRemote", name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
}
