package render_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// hostileContent is text that the checks before kustomize runs refuse in
// a file kustomize reads, with the error that says so: an object with a
// key that is no string (kustomize may exit on it), an alias bomb, and a
// builtin PatchTransformer that names a remote patch (kustomize fetches
// it).
type hostileContent struct {
	name string
	text string
	want error
}

func hostileContents(remote string) []hostileContent {
	return []hostileContent{
		{"non-string key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\ndata:\n  9000: x\n", render.ErrKustomizeFatal},
		{"alias bomb", billionLaughs(5), render.ErrInvalid},
		{"remote PatchTransformer", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: " + remote + "/patch.yaml\ntarget:\n  kind: ConfigMap\n", render.ErrRemote},
	}
}

// remoteServer counts the requests made to it: none may be.
func remoteServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, configMap)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// A file that no kustomization names is not read by kustomize, so it is
// not read by the render either: a README, Helm values, an example
// kustomization, test fixtures with keys that are no strings, alias bombs
// or builtin configurations naming remote files, beside a valid
// kustomization, do not make the render fail.
func TestKustomizeUnreachedFilesNotRead(t *testing.T) {
	srv, hits := remoteServer(t)
	files := map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\n",
		"cm.yaml":            configMap,
		"README.md":          "# an add-on\n",
		"values.txt":         "9000: port\n",
		// An example kustomization that nothing includes names them all.
		"examples/kustomization.yaml": "resources:\n- ../notes.yaml\n- ../bomb.txt\ntransformers:\n- ../patcher.txt\n",
	}
	for _, h := range hostileContents(srv.URL) {
		switch h.want {
		case render.ErrKustomizeFatal:
			files["notes.yaml"] = h.text
		case render.ErrRemote:
			files["patcher.txt"] = h.text
		default:
			files["bomb.txt"] = h.text
		}
	}
	res, err := renderTree(t, files)
	if err != nil {
		t.Fatalf("a tree whose unreferenced files are hostile: %v", err)
	}
	if len(res.Documents) != 1 || res.Documents[0].Object.Name != "cm" {
		t.Errorf("documents %+v", res.Documents)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the render made %d requests", n)
	}
}

// reachEdges are the ways a kustomization names a file kustomize reads:
// each field kustomize v5 reads a file or folder from, legacy fields and
// nested kustomizations included. Each holds the file "h.txt" (or a
// folder's); at names it in the tree.
var reachEdges = []struct {
	name  string
	files map[string]string
	at    string
}{
	{"resources", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- h.txt\n"}, "h.txt"},
	{"field name in another case", map[string]string{"kustomization.yaml": "Resources:\n- cm.yaml\n- h.txt\n"}, "h.txt"},
	{"merge key", map[string]string{"kustomization.yaml": "<<: {resources: [cm.yaml, h.txt]}\n"}, "h.txt"},
	{"nested kustomization", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- sub\n", "sub/kustomization.yaml": "resources:\n- h.txt\n"}, "sub/h.txt"},
	{"bases", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nbases:\n- sub\n", "sub/kustomization.yaml": "resources:\n- h.txt\n"}, "sub/h.txt"},
	{"components", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\ncomponents:\n- comp\n", "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- h.txt\n"}, "comp/h.txt"},
	{"generator files", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: g\n  files:\n  - key=h.txt\n"}, "h.txt"},
	{"generator envs", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nsecretGenerator:\n- name: g\n  envs:\n  - h.txt\n"}, "h.txt"},
	{"generator env", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: g\n  env: h.txt\n"}, "h.txt"},
	{"configurations", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nconfigurations:\n- h.txt\n"}, "h.txt"},
	{"crds", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\ncrds:\n- h.txt\n"}, "h.txt"},
	{"openapi path", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nopenapi:\n  path: h.txt\n"}, "h.txt"},
	{"replacements path", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nreplacements:\n- path: h.txt\n"}, "h.txt"},
	{"patches path", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: h.txt\n"}, "h.txt"},
	{"patchesStrategicMerge", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\npatchesStrategicMerge:\n- h.txt\n"}, "h.txt"},
	{"patchesJson6902 path", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\npatchesJson6902:\n- target: {version: v1, kind: ConfigMap, name: cm}\n  path: h.txt\n"}, "h.txt"},
	{"transformers", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- h.txt\n"}, "h.txt"},
	{"transformers folder", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- t\n", "t/kustomization.yaml": "resources:\n- h.txt\n"}, "t/h.txt"},
	{"generators", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\ngenerators:\n- h.txt\n"}, "h.txt"},
	{"validators", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\nvalidators:\n- h.txt\n"}, "h.txt"},
	{"patch of a nested component", map[string]string{"kustomization.yaml": "resources:\n- sub\n", "sub/kustomization.yaml": "resources:\n- ../cm.yaml\ncomponents:\n- ../comp\n", "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: p/h.txt\n"}, "comp/p/h.txt"},
}

// Hostile content in a file kustomize reads is refused, whichever field
// of whichever kustomization names it, with the error that says what it
// is and naming the file: the walk of the kustomization graph reaches it
// through every edge kustomize follows.
func TestKustomizeReachedHostileRefused(t *testing.T) {
	srv, hits := remoteServer(t)
	for _, e := range reachEdges {
		for _, h := range hostileContents(srv.URL) {
			t.Run(e.name+"/"+h.name, func(t *testing.T) {
				files := map[string]string{"cm.yaml": configMap, e.at: h.text}
				for n, s := range e.files {
					files[n] = s
				}
				_, err := renderTree(t, files)
				var re *render.Error
				if !errors.Is(err, h.want) || !errors.As(err, &re) || re.File != e.at {
					t.Errorf("err = %v; want %v naming %s", err, h.want, e.at)
				}
			})
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the renders made %d requests", n)
	}
	// The walk follows each edge itself: with the file it reaches
	// harmless, a hostile file nothing names is still not read (the walk
	// did not fall back to reading everything).
	for _, e := range reachEdges {
		files := map[string]string{"cm.yaml": configMap, e.at: configMap, "fixtures/unreferenced.yaml": hostileContents(srv.URL)[0].text}
		for n, s := range e.files {
			files[n] = s
		}
		_, err := renderTree(t, files)
		if re, ok := errors.AsType[*render.Error](err); ok && re.File == "fixtures/unreferenced.yaml" {
			t.Errorf("%s: the walk read a file nothing names: %v", e.name, err)
		}
	}
}

// Where the walk cannot tell what kustomize reads, every file of the tree
// counts as read, never fewer: a builtin configuration that names files
// of its own (kustomize resolves them against the kustomization that
// lists it), a kustomization that does not decode, a field the walk does
// not follow. A hostile file that no kustomization names is then refused
// as if one did.
func TestKustomizeUnsureWalkChecksEverything(t *testing.T) {
	hostile := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\ndata:\n  9000: x\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"transformer naming a patch file", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- patcher.yaml\n",
			"patcher.yaml":       "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: patch.yaml\ntarget:\n  kind: ConfigMap\n",
			"patch.yaml":         configMap + "data:\n  patched: \"yes\"\n",
		}},
		{"inline generator naming a file", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ngenerators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata:\n    name: g\n  FILES:\n  - app.properties\n",
			"app.properties":     "a=b\n",
		}},
		{"builtin kind the walk does not know", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- add.yaml\n",
			"add.yaml":           "apiVersion: builtin\nkind: ValueAddTransformer\nmetadata:\n  name: v\nvalue: x\ntargets:\n- fieldPath: metadata/annotations/x\n",
		}},
		{"kustomization that does not decode", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\nresourcez:\n- other.yaml\n",
		}},
		{"field not followed", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\nhelmGlobals:\n  chartHome: charts\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["cm.yaml"] = configMap
			tc.files["fixtures/unreferenced.yaml"] = hostile
			_, err := renderTree(t, tc.files)
			var re *render.Error
			if !errors.Is(err, render.ErrKustomizeFatal) || !errors.As(err, &re) || re.File != "fixtures/unreferenced.yaml" {
				t.Errorf("err = %v; want ErrKustomizeFatal naming fixtures/unreferenced.yaml", err)
			}
			// Without the hostile file, the tree is what kustomize says.
			delete(tc.files, "fixtures/unreferenced.yaml")
			if _, err := renderTree(t, tc.files); errors.Is(err, render.ErrKustomizeFatal) {
				t.Errorf("without the hostile file: %v", err)
			}
		})
	}
	// The same kind of configuration without a file of its own names no
	// file: the unreferenced file is not read.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml":         "resources:\n- cm.yaml\ntransformers:\n- patcher.yaml\n",
		"patcher.yaml":               "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npatch: '[{\"op\": \"add\", \"path\": \"/data\", \"value\": {\"a\": \"b\"}}]'\ntarget:\n  kind: ConfigMap\n",
		"cm.yaml":                    configMap,
		"fixtures/unreferenced.yaml": hostile,
	})
	if err != nil {
		t.Errorf("a PatchTransformer with its patch in place: %v", err)
	}
}

// The walk counts work through every edge too: configurations of
// generators in a folder of their own count as the objects they make.
func TestKustomizeWorkCountsGeneratorFolders(t *testing.T) {
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, "---\napiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g%d\nliterals:\n- a=b\n", i)
	}
	_, err := render.Render(t.Context(), tree(map[string]string{
		"kustomization.yaml":     "resources:\n- cm.yaml\ngenerators:\n- gen\n",
		"gen/kustomization.yaml": "resources:\n- gens.yaml\n",
		"gen/gens.yaml":          b.String(),
		"cm.yaml":                configMap,
	}), render.Options{MaxKustomizeObjects: 3})
	var le *safetree.LimitError
	if !errors.As(err, &le) || le.Which != safetree.LimitKustomizeObjects {
		t.Errorf("4 objects (3 generated in a folder), a cap of 3: err = %v", err)
	}
}

// kustomize reads a folder through a link to it (inside the tree, which
// safetree.CheckLinks allows): the files it reads there are checked by
// the names it reads them by, though a walk of the tree does not enter
// the link.
func TestKustomizeReachedThroughLinkedFolderRefused(t *testing.T) {
	dir := t.TempDir()
	for n, s := range map[string]string{
		"kustomization.yaml":      "resources:\n- linked\n",
		"real/kustomization.yaml": "resources:\n- cm.yaml\n",
		"real/cm.yaml":            hostileContents("")[0].text,
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real", filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	_, err := render.Render(t.Context(), os.DirFS(dir), render.Options{})
	var re *render.Error
	if !errors.Is(err, render.ErrKustomizeFatal) || !errors.As(err, &re) || re.File != "linked/cm.yaml" {
		t.Errorf("err = %v; want ErrKustomizeFatal naming linked/cm.yaml", err)
	}
}
