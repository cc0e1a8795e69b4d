package render_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
)

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"

func tree(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v), Mode: 0o644}
	}
	return m
}

func renderTree(t *testing.T, files map[string]string) (*render.Result, error) {
	t.Helper()
	return render.Render(context.Background(), tree(files), render.Options{})
}

func TestDetectKind(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		want  addon.Kind
	}{
		{map[string]string{"a.yaml": configMap}, addon.KindManifests},
		{map[string]string{"kustomization.yaml": ""}, addon.KindKustomize},
		{map[string]string{"kustomization.yml": ""}, addon.KindKustomize},
		{map[string]string{"Kustomization": ""}, addon.KindKustomize},
		{map[string]string{"sub/kustomization.yaml": "", "a.yaml": configMap}, addon.KindManifests},
	} {
		if got := addon.DetectKind(tree(tc.files)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.files, got, tc.want)
		}
	}
}

func TestRenderManifestsOrder(t *testing.T) {
	cm := func(n string) string { return strings.Replace(configMap, "name: cm", "name: "+n, 1) }
	res, err := renderTree(t, map[string]string{
		"b.yaml":     cm("b"),
		"a/z.yml":    cm("a-z"),
		"a.txt":      "not a manifest",
		"a.json":     `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a-json"}}`,
		"README.md":  "# not a manifest",
		"c.YAML":     cm("c-upper"),
		"0/x.yaml":   cm("0-x") + "---\n" + cm("0-x2"),
		"a/b/c.yaml": cm("a-b-c"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range res.Documents {
		names = append(names, d.Object.Name)
	}
	// Tree order (spec/addon-v1.md section 7.3): "a" before "a.json".
	want := []string{"0-x", "0-x2", "a-b-c", "a-z", "a-json", "b", "c-upper"}
	if !slices.Equal(names, want) {
		t.Errorf("order %q, want %q", names, want)
	}
	if res.Kind != addon.KindManifests {
		t.Errorf("kind %s", res.Kind)
	}
}

func TestRenderManifestsErrorNamesFile(t *testing.T) {
	_, err := renderTree(t, map[string]string{"a.yaml": configMap, "sub/bad.yaml": configMap + "---\nkind: X\nmetadata:\n  name: y\n"})
	if err == nil || !strings.HasPrefix(err.Error(), "sub/bad.yaml:6: ") {
		t.Errorf("err = %v, want it to start with sub/bad.yaml:6", err)
	}
}

// A YAML error names the line it is on, as an editor counts: go-yaml
// counts the lines of its parser's errors from 0 (an unquoted Jinja
// template, as kube-proxy's upstream manifest has, is a flow mapping
// that does not close), its scanner's from 1.
func TestRenderManifestsYAMLErrorLine(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{pillar['x']}}}\n", "bad.yaml:3: "},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n labels: {}\n", "bad.yaml:5: "},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: @x\n", "bad.yaml:3: "},
		{configMap + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{pillar['x']}}}\n", "bad.yaml:8: "},
	} {
		_, err := renderTree(t, map[string]string{"bad.yaml": tc.doc})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to start with %s", tc.doc, err, tc.want)
		}
	}
}

func TestRenderKustomize(t *testing.T) {
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml":      "namespace: prod\nnamePrefix: p-\nresources:\n- base\n",
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            configMap,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != addon.KindKustomize || len(res.Documents) != 1 {
		t.Fatalf("kind %s, %d documents", res.Kind, len(res.Documents))
	}
	if o := res.Documents[0].Object; o.Name != "p-cm" || o.Namespace != "prod" {
		t.Errorf("object %+v", o)
	}
}

func TestKustomizeRemoteRefused(t *testing.T) {
	for _, remote := range []string{
		"https://example.com/x.yaml",
		"http://example.com/x.yaml",
		"github.com/org/repo//dir?ref=v1",
		"https://github.com/org/repo//dir?ref=v1",
		"git@github.com:org/repo.git//dir",
		"ssh://git@example.com/org/repo.git",
		"example.com/org/repo.git//dir?ref=main",
		"gitlab.com/org/repo",
		"git::https://example.com/org/repo",
		"GIT::example.com/org/repo",
	} {
		for _, field := range []string{"resources", "components"} {
			t.Run(field+"/"+remote, func(t *testing.T) {
				_, err := renderTree(t, map[string]string{
					"kustomization.yaml": fmt.Sprintf("%s:\n- %s\n", field, remote),
				})
				if !errors.Is(err, render.ErrRemote) {
					t.Fatalf("err = %v, want ErrRemote", err)
				}
				if !strings.HasPrefix(err.Error(), "kustomization.yaml:2: ") || !strings.Contains(err.Error(), remote) {
					t.Errorf("error %q does not locate and name the resource", err)
				}
			})
		}
	}
	// A URL anywhere in a nested kustomization, in a field kustomize loads.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml":     "resources:\n- sub\n",
		"sub/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: https://example.com/patch.yaml\n",
		"sub/cm.yaml":            configMap,
	})
	if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), "sub/kustomization.yaml:4: ") {
		t.Errorf("remote patch: err = %v, want ErrRemote at sub/kustomization.yaml:4", err)
	}
}

// A URL in a field kustomize only copies into objects as text (an
// annotation naming the project's page, a label, a generator's literal)
// is not a remote resource: `kustomize build` renders the tree without
// fetching anything, and so must the add-on. A URL anchored there and
// named by resources is still refused.
// kustomize tries each resource and component as a git repository
// before it looks for it in the tree: file:///srv/repo, with or without
// go-getter's git:: prefix, ran `git clone` of a repository on the
// installer's disk, even when the tree held a directory of that name to
// pass the check that an entry exists. Such a URL is refused as remote,
// before kustomize runs.
func TestKustomizeLocalRepositoryRefused(t *testing.T) {
	repo := t.TempDir()
	gitRepo(t, repo, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: host\n",
	})
	for _, entry := range []string{"file://" + repo, "git::file://" + repo, "file://" + repo + "//?ref=main"} {
		t.Run(entry, func(t *testing.T) {
			decoy := path.Clean(strings.SplitN(entry, "?", 2)[0])
			start := time.Now()
			_, err := renderTree(t, map[string]string{
				"kustomization.yaml":          "resources:\n- " + entry + "\n",
				decoy + "/kustomization.yaml": "resources: []\n",
			})
			if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), "kustomization.yaml:2: ") {
				t.Errorf("err = %v (after %v), want ErrRemote at kustomization.yaml:2", err, time.Since(start))
			}
		})
	}
}

// gitRepo makes dir a git repository whose one commit, on main, holds
// files.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "files"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
}

func TestKustomizeURLAsTextRenders(t *testing.T) {
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml": `resources:
- cm.yaml
metadata:
  annotations:
    source: https://github.com/acme/widgets
commonAnnotations:
  documentation: https://example.com/docs
labels:
- pairs:
    source: github.com
configMapGenerator:
- name: links
  literals:
  - api=https://api.example.com/v1?ref=main
  options:
    annotations:
      origin: https://example.com/cfg
images:
- name: busybox
  newName: ghcr.io/acme/busybox
`,
		"cm.yaml": configMap,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.YAML())
	for _, want := range []string{"documentation: https://example.com/docs", "api: https://api.example.com/v1?ref=main", "origin: https://example.com/cfg"} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %q:\n%s", want, out)
		}
	}
	_, err = renderTree(t, map[string]string{
		"kustomization.yaml": "commonAnnotations:\n  docs: &u https://example.com/x.yaml\nresources:\n- cm.yaml\n- *u\n",
		"cm.yaml":            configMap,
	})
	if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), "kustomization.yaml:2: ") {
		t.Errorf("URL anchored in an annotation, named in resources: err = %v, want ErrRemote at kustomization.yaml:2", err)
	}
}

// A patch written in place is text kustomize applies, never a location
// it loads: a URL in its values (an annotation, an env var) does not
// make it remote, however compactly the patch is written. A one-line
// JSON patch has no space, which the looser rules of looksRemote read as
// a location.
func TestKustomizeInlinePatchURLRenders(t *testing.T) {
	const jsonOp = `[{"op":"add","path":"/metadata/annotations","value":{"docs":"https://example.com/docs"}}]`
	for name, k := range map[string]string{
		"patches JSON":             "patches:\n- target: {kind: ConfigMap}\n  patch: '" + jsonOp + "'\n",
		"patches merge":            `patches:` + "\n" + `- patch: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","annotations":{"docs":"https://example.com/docs"}}}'` + "\n",
		"patchesJson6902":          "patchesJson6902:\n- target: {version: v1, kind: ConfigMap, name: cm}\n  patch: '" + jsonOp + "'\n",
		"PatchTransformer":         "transformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  target: {kind: ConfigMap}\n  patch: '" + jsonOp + "'\n",
		"PatchJson6902Transformer": "transformers:\n- |-\n  apiVersion: builtin\n  kind: PatchJson6902Transformer\n  metadata: {name: p}\n  target: {version: v1, kind: ConfigMap, name: cm}\n  jsonOp: '" + jsonOp + "'\n",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := renderTree(t, map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n" + k, "cm.yaml": configMap})
			if err != nil {
				t.Fatal(err)
			}
			if out := string(res.YAML()); !strings.Contains(out, "docs: https://example.com/docs") {
				t.Errorf("stream lacks the patched annotation:\n%s", out)
			}
		})
	}
	// The text is skipped, not what an alias names from it: a URL
	// anchored in a patch and named in resources is still refused.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml": "patches:\n- target: {kind: ConfigMap}\n  patch: &u https://example.com/x.yaml\nresources:\n- cm.yaml\n- *u\n",
		"cm.yaml":            configMap,
	})
	if !errors.Is(err, render.ErrRemote) {
		t.Errorf("URL anchored in a patch, named in resources: err = %v, want ErrRemote", err)
	}
}

// kustomize loads the files that the configuration of a builtin
// transformer or generator names (a PatchTransformer's path, a
// ConfigMapGenerator's files) over HTTP when they are URLs, whatever its
// load restrictions: a configuration file the kustomization names in
// transformers or generators is checked as the kustomization is. Nothing
// reaches the server unless remote resources are allowed.
func TestKustomizeBuiltinConfigRemoteRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  fetched: \"yes\"\n")
	}))
	defer srv.Close()
	patcher := "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: " + srv.URL + "/patch.yaml\ntarget:\n  kind: ConfigMap\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		at    string
	}{
		{"transformer file", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- patcher.yaml\n",
			"patcher.yaml":       patcher,
		}, "patcher.yaml:5: "},
		{"transformer in a List", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- t/patcher.json\n",
			"t/patcher.json":     `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"builtin","kind":"PatchTransformer","metadata":{"name":"p"},"path":"` + srv.URL + `/x.yaml"}]}`,
		}, "t/patcher.json:1: "},
		{"transformers directory", map[string]string{
			"kustomization.yaml":   "resources:\n- cm.yaml\ntransformers:\n- t\n",
			"t/kustomization.yaml": "resources:\n- patcher.yaml\n",
			"t/patcher.yaml":       "# the configuration\n" + patcher,
		}, "t/patcher.yaml:6: "},
		{"transformer file not named .yaml", map[string]string{
			"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- patcher.txt\n",
			"patcher.txt":        patcher,
		}, "patcher.txt:5: "},
		{"generator file", map[string]string{
			"kustomization.yaml": "generators:\n- gen.yaml\n",
			"gen.yaml":           "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nfiles:\n- " + srv.URL + "/app.properties\n",
		}, "gen.yaml:6: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["cm.yaml"] = configMap
			hits.Store(0)
			_, err := renderTree(t, tc.files)
			if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), tc.at) || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("err = %v, want ErrRemote at %s naming the URL", err, tc.at)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the render made %d requests", n)
			}
		})
	}
	// Allowed, the same tree loads the patch: the test's URL is one
	// kustomize fetches.
	hits.Store(0)
	res, err := render.Render(context.Background(), tree(map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- patcher.yaml\n",
		"patcher.yaml":       patcher,
		"cm.yaml":            configMap,
	}), render.Options{AllowRemote: true})
	if err != nil || hits.Load() == 0 || !strings.Contains(string(res.YAML()), "fetched:") {
		t.Errorf("allowed: err = %v, %d requests", err, hits.Load())
	}
	// A builtin configuration that names no URL, with one in its labels,
	// renders.
	res, err = renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- labels.yaml\n",
		"labels.yaml":        "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels:\n  site: example.com\nfieldSpecs:\n- path: metadata/labels\n  create: true\n",
		"cm.yaml":            configMap,
	})
	if err != nil || !strings.Contains(string(res.YAML()), "site: example.com") {
		t.Errorf("label transformer: err = %v", err)
	}
}

// An entry of transformers, generators or validators may be the
// configuration itself, written in place (kustomize's inline
// configurations), rather than a path: the tree renders as `kustomize
// build` renders it. A remote location in one is refused as in a file.
func TestKustomizeInlineConfigs(t *testing.T) {
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml": `resources:
- cm.yaml
transformers:
- |-
  apiVersion: builtin
  kind: PrefixSuffixTransformer
  metadata:
    name: prefixer
  prefix: pre-
  fieldSpecs:
  - path: metadata/name
- labels.yaml
generators:
- |
  apiVersion: builtin
  kind: ConfigMapGenerator
  metadata:
    name: generated
  literals:
  - k=v
`,
		"labels.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels:\n  team: a\nfieldSpecs:\n- path: metadata/labels\n  create: true\n",
		"cm.yaml":     configMap,
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range res.Documents {
		names = append(names, d.Object.Name)
	}
	if len(names) != 2 || names[0] != "pre-cm" || !strings.HasPrefix(names[1], "pre-generated-") || !strings.Contains(string(res.YAML()), "team: a") {
		t.Errorf("objects %q:\n%s", names, res.YAML())
	}
	_, err = renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata:\n    name: p\n  path: https://example.com/patch.yaml\n",
		"cm.yaml":            configMap,
	})
	if !errors.Is(err, render.ErrRemote) || !strings.HasPrefix(err.Error(), "kustomization.yaml:4: ") {
		t.Errorf("inline remote patch: err = %v, want ErrRemote at kustomization.yaml:4", err)
	}
	// A path that does not exist is still named as one.
	_, err = renderTree(t, map[string]string{"kustomization.yaml": "transformers:\n- missing.yaml\n"})
	if err == nil || !strings.Contains(err.Error(), `transformers "missing.yaml": not found`) {
		t.Errorf("missing transformer: err = %v", err)
	}
}

func TestKustomizeOutsideRootRefused(t *testing.T) {
	for _, p := range []string{"../x", "../x.yaml", "..", "/etc/passwd", "sub/../../x"} {
		t.Run(p, func(t *testing.T) {
			_, err := renderTree(t, map[string]string{
				"kustomization.yaml": "resources:\n- cm.yaml\n- " + p + "\n",
				"cm.yaml":            configMap,
				"sub/x.yaml":         configMap,
			})
			if !errors.Is(err, render.ErrOutsideRoot) {
				t.Fatalf("err = %v, want ErrOutsideRoot", err)
			}
			if !strings.HasPrefix(err.Error(), "kustomization.yaml:3: ") {
				t.Errorf("error %q does not locate the entry", err)
			}
		})
	}
	// From a nested kustomization, ../base stays inside the tree (the
	// overlay layout) but ../../ leaves it.
	_, err := renderTree(t, map[string]string{
		"kustomization.yaml":               "resources:\n- overlays/prod\n",
		"overlays/prod/kustomization.yaml": "resources:\n- ../../base\n",
		"base/kustomization.yaml":          "resources:\n- cm.yaml\n",
		"base/cm.yaml":                     configMap,
	})
	if err != nil {
		t.Errorf("an overlay of ../../base, inside the tree: %v", err)
	}
	_, err = renderTree(t, map[string]string{
		"kustomization.yaml":     "resources:\n- sub\n",
		"sub/kustomization.yaml": "resources:\n- ../../cm.yaml\n",
		"cm.yaml":                configMap,
	})
	if !errors.Is(err, render.ErrOutsideRoot) {
		t.Errorf("../../ from a subdirectory: %v, want ErrOutsideRoot", err)
	}
}

func TestKustomizeMissingResource(t *testing.T) {
	_, err := renderTree(t, map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- missing.yaml\n", "cm.yaml": configMap})
	if err == nil || !strings.HasPrefix(err.Error(), "kustomization.yaml:3: ") || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("err = %v, want it to locate missing.yaml", err)
	}
}

func TestKustomizeErrorIsOneLine(t *testing.T) {
	_, err := renderTree(t, map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n"})
	if err == nil {
		t.Fatal("accepted")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error has more than one line: %q", err)
	}
}

func TestRenderCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, files := range []map[string]string{
		{"a.yaml": configMap},
		{"kustomization.yaml": "resources:\n- a.yaml\n", "a.yaml": configMap},
	} {
		if _, err := render.Render(ctx, tree(files), render.Options{}); !errors.Is(err, context.Canceled) {
			t.Errorf("%v: err = %v, want context.Canceled", files, err)
		}
	}
}

// billionLaughs is a ConfigMap whose data holds levels of anchors, each
// level a list of nine aliases of the one below: 9^levels strings once
// expanded, from a file of a few hundred bytes.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n")
	b.WriteString(`  l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < levels; i++ {
		a := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.Repeat(a+",", 8)+a)
	}
	return b.String()
}

// A patch or a configuration written in place is a document kustomize
// parses as it parses a file, so a billion laughs there is refused as
// in a file, before kustomize runs: the checks skipped the text that did
// not parse, and kustomize expanded it in memory until it was killed.
func TestYAMLBombInlineRefused(t *testing.T) {
	// block is s as the text of a block scalar indented by n spaces.
	block := func(s string, n int) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
	}
	bomb := billionLaughs(9)
	laughs := "l0:" + strings.SplitN(bomb, "l0:", 2)[1] // its aliases, indented by 2
	cases := map[string]string{
		"patches":               "patches:\n- patch: |-\n" + block(bomb, 4),
		"patchesStrategicMerge": "patchesStrategicMerge:\n- |-\n" + block(bomb, 2),
		"inline PatchTransformer": "transformers:\n- |-\n" +
			block("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npatch: |-\n"+block(bomb, 2), 2),
		"inline PatchStrategicMergeTransformer": "transformers:\n- |-\n" +
			block("apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata:\n  name: p\npatches: |-\n"+block(bomb, 2), 2),
		"inline PatchJson6902Transformer": "transformers:\n- |-\n" +
			block("apiVersion: builtin\nkind: PatchJson6902Transformer\nmetadata:\n  name: p\ntarget: {version: v1, kind: ConfigMap, name: cm}\njsonOp: |-\n"+block("- op: add\n  path: /data/x\n  value:\n    "+strings.ReplaceAll(laughs, "\n  ", "\n    "), 2), 2),
		"inline configuration": "transformers:\n- |-\n" +
			block("apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels: {a: b}\nfieldSpecs:\n- path: metadata/labels\n  create: true\nlaughs:\n  "+laughs, 2),
	}
	if name := os.Getenv("ADDONPKG_TEST_INLINE_BOMB"); name != "" {
		for _, allowRemote := range []bool{false, true} {
			fsys := tree(map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n" + cases[name], "cm.yaml": configMap})
			_, err := render.Render(context.Background(), fsys, render.Options{AllowRemote: allowRemote})
			if !errors.Is(err, render.ErrInvalid) || !strings.HasPrefix(err.Error(), "kustomization.yaml:") || !strings.Contains(err.Error(), "excessive aliasing") {
				t.Errorf("AllowRemote %v: err = %v; want ErrInvalid naming kustomization.yaml and the aliasing", allowRemote, err)
			}
		}
		return
	}
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestYAMLBombInlineRefused$", "-test.count=1")
			cmd.Env = append(os.Environ(), "ADDONPKG_TEST_INLINE_BOMB="+name)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("rendering a kustomization with a billion laughs written in place still ran after 10s (killed); output:\n%s", out)
			}
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
		})
	}
}

// A billion-laughs document is refused, quickly, as kubectl refuses it at
// apply time: sigs.k8s.io/yaml says "document contains excessive
// aliasing" already for 9^4 strings. Levels 5 (59,049 strings from 600
// bytes) and 9 (the classic billion) are tested.
func TestYAMLBombManifestRefused(t *testing.T) {
	for _, levels := range []int{5, 9} {
		start := time.Now()
		_, err := renderTree(t, map[string]string{"bomb.yaml": billionLaughs(levels)})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("9^%d: took %v", levels, d)
		}
		if err == nil {
			t.Errorf("a manifest whose aliases expand to 9^%d strings was accepted; kubectl apply refuses it (excessive aliasing)", levels)
		} else if !strings.HasPrefix(err.Error(), "bomb.yaml:") {
			t.Errorf("9^%d: error %q does not name the file", levels, err)
		}
	}
}

// The same in a kustomize tree, where kustomize would expand every alias
// in memory (9^5 strings take ~135 MB and 3 s, 9^6 1 GB and 22 s, 9^9
// terabytes), so it must be refused before kustomize runs, whatever the
// file is named: kustomize reads a resource from bomb.txt as from
// bomb.yaml. Each render runs in a child process with a deadline, so
// that a regression cannot take the machine's memory down with it.
func TestYAMLBombKustomizeRefused(t *testing.T) {
	if lv := os.Getenv("ADDONPKG_TEST_BOMB_LEVELS"); lv != "" {
		var levels int
		fmt.Sscan(lv, &levels)
		file := os.Getenv("ADDONPKG_TEST_BOMB_FILE")
		start := time.Now()
		_, err := renderTree(t, map[string]string{
			"kustomization.yaml": "resources:\n- " + file + "\n",
			file:                 billionLaughs(levels),
		})
		if err == nil {
			t.Fatalf("a kustomize resource whose aliases expand to 9^%d strings was accepted (kustomize expanded it in memory in %v); kubectl refuses it", levels, time.Since(start))
		}
		if !strings.HasPrefix(err.Error(), file+":") {
			t.Errorf("error %q does not name the file", err)
		}
		return
	}
	for _, file := range []string{"bomb.yaml", "bomb.txt"} {
		for _, levels := range []int{5, 9} {
			t.Run(fmt.Sprintf("%s/9^%d", file, levels), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestYAMLBombKustomizeRefused$", "-test.count=1")
				cmd.Env = append(os.Environ(), fmt.Sprintf("ADDONPKG_TEST_BOMB_LEVELS=%d", levels), "ADDONPKG_TEST_BOMB_FILE="+file)
				out, err := cmd.CombinedOutput()
				if ctx.Err() != nil {
					t.Fatalf("rendering a kustomize tree with a 9^%d billion-laughs resource still ran after 10s (killed); output:\n%s", levels, out)
				}
				if err != nil {
					t.Fatalf("%v:\n%s", err, out)
				}
			})
		}
	}
}

func TestInventoryExamples(t *testing.T) {
	for _, tc := range []struct {
		dir          string
		kind         addon.Kind
		objects      int
		images, crds []string
	}{
		{"coredns", addon.KindManifests, 6, []string{"registry.k8s.io/coredns/coredns:v1.14.2"}, nil},
		{"metrics-server", addon.KindKustomize, 9, []string{"registry.k8s.io/metrics-server/metrics-server:v0.9.0"}, nil},
		{"metrics-server/base", addon.KindKustomize, 9, []string{"gcr.io/k8s-staging-metrics-server/metrics-server:master"}, nil},
		{"gateway-api-crds", addon.KindKustomize, 3, nil, []string{
			"gatewayclasses.gateway.networking.k8s.io",
			"gateways.gateway.networking.k8s.io",
			"httproutes.gateway.networking.k8s.io",
		}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			res, err := render.Render(context.Background(), os.DirFS("../../examples/"+tc.dir), render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != tc.kind {
				t.Errorf("kind %s, want %s", res.Kind, tc.kind)
			}
			inv := res.Inventory()
			if len(inv.Objects) != tc.objects {
				t.Errorf("%d objects, want %d", len(inv.Objects), tc.objects)
			}
			if !slices.Equal(inv.Images, tc.images) {
				t.Errorf("images %q, want %q", inv.Images, tc.images)
			}
			if !slices.Equal(inv.CRDs, tc.crds) {
				t.Errorf("CRDs %q, want %q", inv.CRDs, tc.crds)
			}
			for i, o := range inv.Objects {
				if o != res.Documents[i].Object {
					t.Errorf("object %d: %+v, document %+v", i, o, res.Documents[i].Object)
				}
			}
		})
	}
}

func TestInventoryImages(t *testing.T) {
	res, err := renderTree(t, map[string]string{"w.yaml": `apiVersion: batch/v1
kind: CronJob
metadata:
  name: c
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - name: init
            image: busybox:1
          containers:
          - name: main
            image: example.com/app@sha256:0000000000000000000000000000000000000000000000000000000000000000
          - name: again
            image: busybox:1
          ephemeralContainers:
          - name: debug
            image: debug:2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-an-image
data:
  image: nginx:latest
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - name: a
        image: zz:1
      - name: empty
        image: ""
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: a
    image: pod:1
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: pt
template:
  spec:
    containers:
    - name: a
      image: podtemplate:1
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata:
  name: custom-resource
spec:
  image: quay.io/prometheus/prometheus:v2
  containers:
  - name: sidecar
    image: cr-sidecar:1
---
apiVersion: example.com/v1
kind: Deployment
metadata:
  name: a-custom-kind-named-deployment
spec:
  template:
    spec:
      containers:
      - name: a
        image: cr-deployment:1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: containers-not-in-the-pod-spec
  annotations:
    note: x
spec:
  containers:
  - name: a
    image: misplaced:1
  template:
    spec:
      containers:
      - name: a
        image: placed:1
`})
	if err != nil {
		t.Fatal(err)
	}
	// Spec 6.2: the pod specs of the core workload kinds only; a custom
	// resource's images (even of a kind named Deployment) are not the
	// add-on's, nor are containers outside the pod spec.
	want := []string{"busybox:1", "debug:2", "example.com/app@sha256:0000000000000000000000000000000000000000000000000000000000000000", "placed:1", "pod:1", "podtemplate:1", "zz:1"}
	if got := res.Inventory().Images; !slices.Equal(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}
	if inv := res.Inventory(); len(inv.Objects) != 8 || inv.CRDs != nil {
		t.Errorf("inventory %+v", inv)
	}
}

// spec/addon-v1.md section 6.2: crds are "ascending byte order, no duplicates".
func TestInventoryCRDsNoDuplicates(t *testing.T) {
	crd := func(n string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + n + "\n"
	}
	// Two copies of one CRD are refused (section 6.2): one of each name
	// is left, and the order is still the rule's.
	if _, err := renderTree(t, map[string]string{
		"a.yaml": crd("zs.example.com"),
		"b.yaml": crd("zs.example.com"),
	}); !errors.Is(err, render.ErrDuplicate) {
		t.Errorf("two copies of a CRD: %v, want ErrDuplicate", err)
	}
	res, err := renderTree(t, map[string]string{
		"a.yaml": crd("zs.example.com") + "---\n" + crd("as.example.com"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Inventory().CRDs, []string{"as.example.com", "zs.example.com"}; !slices.Equal(got, want) {
		t.Errorf("CRDs %q, want %q", got, want)
	}
}

// kustomize reads a patchesStrategicMerge entry as a patch written in
// place first, and loads it as a path (fetching an http or https URL)
// only when that fails: a one-line JSON patch whose values hold a URL is
// never fetched, and renders; an entry that is a URL is fetched, and
// refused unless remote resources are allowed. With remote resources
// allowed, the server sees what kustomize fetches.
func TestKustomizeStrategicMergeEntryFetchedOnlyAsURL(t *testing.T) {
	srv, hits := remoteServer(t)
	u := srv.URL + "/p.yaml"
	jsonPatch := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","annotations":{"docs":"` + u + `"}}}`
	files := func(entry string) fstest.MapFS {
		return tree(map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\npatchesStrategicMerge:\n- '" + entry + "'\n", "cm.yaml": configMap})
	}
	for _, allow := range []bool{false, true} {
		res, err := render.Render(t.Context(), files(jsonPatch), render.Options{AllowRemote: allow})
		if err != nil {
			t.Fatalf("JSON patch, remote allowed %v: %v", allow, err)
		}
		if out := string(res.YAML()); !strings.Contains(out, "docs: "+u) {
			t.Errorf("stream lacks the patched annotation:\n%s", out)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("kustomize fetched the JSON patch's URL %d times", n)
	}
	if _, err := render.Render(t.Context(), files(u), render.Options{}); !errors.Is(err, render.ErrRemote) {
		t.Errorf("URL entry: err = %v, want ErrRemote", err)
	}
	if hits.Load() != 0 {
		t.Fatal("a refused render reached the server")
	}
	if _, err := render.Render(t.Context(), files(u), render.Options{AllowRemote: true}); err != nil {
		t.Fatalf("URL entry, remote allowed: %v", err)
	}
	if hits.Load() == 0 {
		t.Error("kustomize did not fetch the URL entry: the refusal guards nothing")
	}
}
