package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// What real upstream trees hold (issue 25): each case is a shape found in
// one, and what the renderer makes of it. The streams themselves are
// judged by kubectl in cmd/addonpkg's TestRealAddonShapesKubectl.

func cm(name, ns string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	if ns != "" {
		s += "  namespace: " + ns + "\n"
	}
	return s
}

func names(res *render.Result) string {
	var out []string
	for _, d := range res.Documents {
		out = append(out, d.Object.Kind+"/"+d.Object.Name)
	}
	return strings.Join(out, " ")
}

// A List's items take its place, in apply order and in the inventory: a
// Namespace inside a List comes before the ConfigMap that lives in it.
func TestRenderFlattensLists(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n    namespace: n\n" +
		"- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: n\n"
	for _, dropText := range []bool{false, true} {
		res, err := render.Render(context.Background(), tree(map[string]string{"export.yaml": list}), render.Options{DropText: dropText})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(res); got != "Namespace/n ConfigMap/c" {
			t.Errorf("DropText %v: documents %s, want Namespace/n ConfigMap/c", dropText, got)
		}
		inv := res.Inventory()
		if len(inv.Objects) != 2 || inv.Objects[0].Kind != "Namespace" || inv.Objects[1].Name != "c" {
			t.Errorf("inventory %+v", inv.Objects)
		}
		if y := string(res.YAML()); strings.Contains(y, "kind: List") || !strings.HasPrefix(y, "apiVersion: v1\nkind: Namespace\n") {
			t.Errorf("stream:\n%s", y)
		}
		if l := res.Documents[0].Line; l != 11 {
			t.Errorf("the Namespace is located at line %d, want 11", l)
		}
	}
}

// Only a List holds items. kubectl's decoder (and apply's) reads any
// document with a top-level items field as a list and applies its items
// in its place: a ConfigMap holding items: [a Deployment] was listed as a
// ConfigMap without images, relocated as one, and installed a Deployment
// that pulled its image from where the add-on said. A List whose items
// come through a merge key was listed as one object of kind List, and
// installed its items.
func TestRenderRefusesItemsOutsideAList(t *testing.T) {
	// Block style only: the renderer's fast path reads it.
	deploy := "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: hidden\n  spec:\n    selector:\n      matchLabels:\n        a: b\n" +
		"    template:\n      metadata:\n        labels:\n          a: b\n      spec:\n        containers:\n        - name: c\n          image: elsewhere.example/miner:1\n"
	for name, files := range map[string]map[string]string{
		"a ConfigMap":          {"a.yaml": cm("note", "") + "items:\n" + deploy},
		"a ConfigMap in JSON":  {"a.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"note"},"items":[]}`},
		"an item of a List":    {"a.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: note}\n  items:\n  " + strings.ReplaceAll(deploy, "\n", "\n  ")},
		"a List by merge key":  {"a.yaml": "apiVersion: v1\nkind: List\nmetadata: {name: l}\n<<: {items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: note}}]}\n"},
		"a kustomize resource": {"kustomization.yaml": "resources: [a.yaml]\n", "a.yaml": cm("note", "") + "items:\n" + deploy},
	} {
		res, err := render.Render(context.Background(), tree(files), render.Options{})
		if !errors.Is(err, render.ErrInvalid) || !strings.Contains(err.Error(), "items") {
			got := ""
			if res != nil {
				got = names(res)
			}
			t.Errorf("%s: err = %v (documents %s), want ErrInvalid naming items", name, err, got)
		}
	}
}

// A stream whose first document comes from a JSON file begins as YAML.
func TestRenderJSONFirstAsYAML(t *testing.T) {
	files := map[string]string{
		"a.json": `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns","labels":{"on":"true","n":"1","y":"no","x":"0x1F","e":"1e3","empty":"","plain":"a b"}}}`,
		"b.yaml": cm("c", "ns"),
	}
	for _, dropText := range []bool{false, true} {
		res, err := render.Render(context.Background(), tree(files), render.Options{DropText: dropText})
		if err != nil {
			t.Fatal(err)
		}
		// Strings that YAML 1.1 (kubectl) or 1.2 reads as other types
		// keep their quotes, keys too.
		want := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  labels:\n    \"on\": \"true\"\n    \"n\": \"1\"\n    \"y\": \"no\"\n    x: \"0x1F\"\n    e: \"1e3\"\n    empty: \"\"\n    plain: a b\n---\n" + cm("c", "ns")
		if got := string(res.YAML()); got != want {
			t.Errorf("DropText %v: stream\n%s\nwant\n%s", dropText, got, want)
		}
	}
}

// A byte order mark never reaches the stream, wherever the file lands.
func TestRenderStripsBOM(t *testing.T) {
	files := map[string]string{
		"a.yaml": cm("a", ""),
		"b.yaml": "\ufeff" + cm("b", ""),
		"c.yaml": cm("c", "") + "---\n\ufeff" + cm("d", ""),
	}
	for _, dropText := range []bool{false, true} {
		res, err := render.Render(context.Background(), tree(files), render.Options{DropText: dropText})
		if err != nil {
			t.Fatal(err)
		}
		y := res.YAML()
		if bytes.Contains(y, []byte("\ufeff")) {
			t.Errorf("DropText %v: the stream holds a byte order mark:\n%q", dropText, y)
		}
		if got := names(res); got != "ConfigMap/a ConfigMap/b ConfigMap/c ConfigMap/d" {
			t.Errorf("documents %s", got)
		}
	}
}

// Two copies of one object (group, kind, namespace, name; the version
// does not count) are refused, naming both places.
func TestRenderRefusesDuplicates(t *testing.T) {
	deploy := func(v string) string {
		return "apiVersion: " + v + "\nkind: Deployment\nmetadata:\n  name: typha\n  namespace: kube-system\n"
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // "" when accepted
	}{
		{"two files", map[string]string{"calico.yaml": cm("x", "") + "---\n" + deploy("apps/v1"), "calico-typha.yaml": deploy("apps/v1")},
			"duplicate object: Deployment.apps kube-system/typha is in both calico-typha.yaml:1 and calico.yaml:6"},
		{"another version", map[string]string{"a.yaml": deploy("apps/v1"), "b.yaml": deploy("apps/v1beta2")},
			"duplicate object: Deployment.apps kube-system/typha is in both a.yaml:1 and b.yaml:1"},
		{"one file", map[string]string{"a.yaml": cm("x", "") + "---\n" + cm("x", "")},
			"duplicate object: ConfigMap x is in both a.yaml:1 and a.yaml:6"},
		{"in a List", map[string]string{"a.yaml": cm("x", ""), "l.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n"},
			"duplicate object: ConfigMap x is in both a.yaml:1 and l.yaml:4"},
		{"kustomize, two versions", map[string]string{"kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n", "a.yaml": deploy("apps/v1"), "b.yaml": deploy("apps/v1beta2")},
			"kustomization.yaml: duplicate object: Deployment.apps kube-system/typha is rendered twice"},
		{"other namespaces", map[string]string{"a.yaml": cm("x", "a"), "b.yaml": cm("x", "b")}, ""},
		{"other groups", map[string]string{"a.yaml": deploy("apps/v1"), "b.yaml": deploy("example.com/v1")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderTree(t, c.files)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != c.want || !errors.Is(err, render.ErrDuplicate) {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

// Helm's inputs are named as what they are, with what to run instead.
func TestRenderRefusesHelmInputs(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // the error's start
	}{
		{"a chart", map[string]string{"Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n", "values.yaml": "replicas: 1\n", "templates/d.yaml": "{{ .Values.x }}\n"},
			"Chart.yaml: a Helm chart, not manifests (the add-on is a chart"},
		{"a chart below", map[string]string{"a.yaml": cm("a", ""), "charts/x/Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n"},
			"charts/x/Chart.yaml: a Helm chart, not manifests (charts/x/ is a chart"},
		{"a values file", map[string]string{"a.yaml": cm("a", ""), "values.yaml": "replicas: 1\nimage:\n  tag: v1\n"},
			"values.yaml:1: invalid manifest: values.yaml holds the values of a Helm chart, not a Kubernetes object (missing Resource metadata): run `helm template"},
		{"a values file per environment", map[string]string{"values-prod.yaml": "replicas: 3\n"},
			"values-prod.yaml:1: invalid manifest: values-prod.yaml holds the values of a Helm chart"},
		{"helmCharts", map[string]string{"kustomization.yaml": "helmCharts:\n- name: x\n  repo: https://charts.example.com\n"},
			"kustomization.yaml:1: helmCharts inflates a Helm chart, which needs kustomize's --enable-helm"},
		{"helmChartInflationGenerator", map[string]string{"kustomization.yaml": "resources:\n- a.yaml\nhelmChartInflationGenerator:\n- chartName: x\n", "a.yaml": cm("a", "")},
			"kustomization.yaml:3: helmChartInflationGenerator inflates a Helm chart"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderTree(t, c.files)
			if !errors.Is(err, addon.ErrHelmChart) {
				t.Fatalf("error %v: not ErrHelmChart", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), " build that file") {
				t.Errorf("error %q\nwant it to start %q and say what to run", err, c.want)
			}
		})
	}
	// A values file that is an object is a manifest like any other.
	if _, err := renderTree(t, map[string]string{"values.yaml": cm("values", "")}); err != nil {
		t.Errorf("a ConfigMap named values.yaml: %v", err)
	}
}

// A kustomization below the root of a plain tree (a repository checked
// out whole, as metrics-server's with manifests/base) is named as what
// it is, with the directory to use instead; a Flux Kustomization object
// in a file of that name is an object like any other.
func TestRenderNamesKustomizationBelowPlainRoot(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"with kind", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- a.yaml\n",
			"manifests/base/kustomization.yaml:1: invalid manifest: kustomization.yaml is a kustomization, not a Kubernetes object (Kustomization has no metadata.name): the add-on's root holds no kustomization, so its files are plain manifests; use manifests/base as the add-on"},
		{"legacy, without kind", "resources:\n- a.yaml\n",
			"manifests/base/kustomization.yaml:1: invalid manifest: kustomization.yaml is a kustomization, not a Kubernetes object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderTree(t, map[string]string{"README.yaml": cm("readme", ""), "manifests/base/kustomization.yaml": c.text, "manifests/base/a.yaml": cm("a", "")})
			if !errors.Is(err, render.ErrInvalid) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %v\nwant ErrInvalid starting %q", err, c.want)
			}
		})
	}
	flux := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: repo}}\n"
	if _, err := renderTree(t, map[string]string{"clusters/prod/kustomization.yaml": flux}); err != nil {
		t.Errorf("a Flux Kustomization object in kustomization.yaml: %v", err)
	}
}

// kustomize's deprecation warnings are returned, in its words, named
// with their kustomization (kustomize prints its own copy on os.Stderr,
// which a render leaves alone: TestRenderKustomizeLeavesProcessOutput).
func TestRenderKustomizeWarnings(t *testing.T) {
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml":      "resources:\n- base\ncommonLabels:\n  app: x\n",
		"base/kustomization.yaml": "resources:\n- a.yaml\npatchesStrategicMerge:\n- p.yaml\n",
		"base/a.yaml":             cm("a", ""),
		"base/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
		"base/kustomization.yaml: 'patchesStrategicMerge' is deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
	}
	if strings.Join(res.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(res.Warnings, "\n"), strings.Join(want, "\n"))
	}
	res, err = renderTree(t, map[string]string{"kustomization.yaml": "resources:\n- a.yaml\nlabels:\n- pairs:\n    app: x\n", "a.yaml": cm("a", "")})
	if err != nil || len(res.Warnings) != 0 {
		t.Errorf("no deprecated field: %q, %v", res.Warnings, err)
	}
}

// kustomize logs the vars it never replaced through the standard logger,
// which a render leaves alone; the render works out the same condition
// and returns it as a warning named with the kustomization that
// declares the vars. A var that a resource refers to, here from a base,
// is not named.
func TestRenderKustomizeUnusedVarsWarning(t *testing.T) {
	vars := func(names ...string) string {
		s := "vars:\n"
		for _, n := range names {
			s += "- name: " + n + "\n  objref: {kind: ConfigMap, name: a, apiVersion: v1}\n  fieldref: {fieldpath: metadata.name}\n"
		}
		return s
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n    args: [\"$(USED)\"]\n"
	res, err := renderTree(t, map[string]string{
		"kustomization.yaml":      "resources:\n- a.yaml\n- base\n" + vars("USED", "UNUSED", "ALSO_UNUSED"),
		"a.yaml":                  cm("a", ""),
		"base/kustomization.yaml": "resources:\n- pod.yaml\nvars:\n- name: BASE_UNUSED\n  objref: {kind: Pod, name: p, apiVersion: v1}\n",
		"base/pod.yaml":           pod,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.YAML()), "- a\n") {
		t.Errorf("USED was not replaced:\n%s", res.YAML())
	}
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "never replaced") {
			got = append(got, w)
		}
	}
	want := []string{
		"kustomization.yaml: well-defined vars that were never replaced: UNUSED,ALSO_UNUSED",
		"base/kustomization.yaml: well-defined vars that were never replaced: BASE_UNUSED",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	res, err = renderTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- a.yaml\n- pod.yaml\n" + vars("USED"),
		"a.yaml":             cm("a", ""),
		"pod.yaml":           pod,
	})
	if err != nil || slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "never replaced") }) {
		t.Errorf("every var used: %q, %v", res.Warnings, err)
	}
}

// os.Stderr and the standard logger are the whole process's: renders
// leave both alone, whatever their trees, so what the caller's other
// goroutines write meanwhile reaches the caller's log and stderr, never a
// render's warnings, and nothing races on them (run with -race: a render
// that swapped os.Stderr raced with the caller's Fprintln). A tree with
// deprecated fields gets its warnings all the same, and kustomize's own
// line for each reaches os.Stderr, where kustomize prints it.
func TestRenderKustomizeLeavesProcessOutput(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logged.Write(p) }))
	log.SetFlags(0)
	defer func() { log.SetOutput(out); log.SetFlags(flags) }()
	// The test owns the process: its stderr goes to a file it reads back.
	stderrFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderrFile.Close()
	stderr := os.Stderr
	os.Stderr = stderrFile
	defer func() { os.Stderr = stderr }()

	trees := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no deprecated field", map[string]string{"kustomization.yaml": "resources:\n- a.yaml\nlabels:\n- pairs:\n    app: x\n", "a.yaml": cm("a", "")}, nil},
		{"deprecated fields", map[string]string{
			"kustomization.yaml":      "bases:\n- base\ncommonLabels:\n  app: x\nsortOptions:\n  order: legacy\n",
			"base/kustomization.yaml": "resources:\n- a.yaml\npatchesStrategicMerge:\n- p.yaml\n",
			"base/a.yaml":             cm("a", ""),
			"base/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
		}, []string{
			"kustomization.yaml: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
			"kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
			"base/kustomization.yaml: 'patchesStrategicMerge' is deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
		}},
	}

	stop := make(chan struct{})
	written := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				written <- n
				return
			default:
				log.Printf("caller line %d", n)
				fmt.Fprintf(os.Stderr, "caller stderr %d\n", n)
				n++
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for _, tr := range trees {
		for range 4 {
			wg.Go(func() {
				for range 5 {
					res, err := renderTree(t, tr.files)
					if err != nil {
						errs <- fmt.Sprintf("%s: %v", tr.name, err)
						return
					}
					if !slices.Equal(res.Warnings, tr.want) {
						errs <- fmt.Sprintf("%s: %d warnings, the first %q, want\n%s (the caller's own lines, taken by a swapped os.Stderr or logger?)",
							tr.name, len(res.Warnings), append(res.Warnings, "")[0], strings.Join(tr.want, "\n"))
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	n := <-written
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Count(logged.String(), "caller line "); got != n {
		t.Errorf("the caller logged %d lines during the renders and %d reached its log", n, got)
	}
	b, err := os.ReadFile(stderrFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "caller stderr "); got != n {
		t.Errorf("the caller wrote %d lines to os.Stderr during the renders and %d reached it", n, got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The shapes real kustomizations take that the remote and key checks
// read closely must render: URLs and scp-like text as values (literals,
// env files, annotations, a JSON patch's value, an inline transformer's
// annotations), image names with registry hosts and ports, local names
// that start like a location (https-proxy.yaml, github.com-mirror/), a
// component, replacements written in place and in a file, patches with
// target selectors, and generator files holding backslashes (which
// make the walk parse them for a builtin configuration).
func TestRenderKustomizeRealWorldURLsAndNames(t *testing.T) {
	deploy := func(name string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  labels: {app: " + name + "}\n" +
			"spec:\n  selector:\n    matchLabels: {app: " + name + "}\n  template:\n    metadata:\n      labels: {app: " + name + "}\n" +
			"    spec:\n      containers:\n      - name: c\n        image: nginx\n        args: [\"--match\", \"^/api/(.*)\\\\.json$\"]\n"
	}
	res, err := render.Render(context.Background(), tree(map[string]string{
		"kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: proxy
commonAnnotations:
  documentation: https://example.com/docs
  source: git@github.com:org/repo.git
resources:
- https-proxy.yaml
- github.com-mirror/svc.yaml
- httpbin
components:
- components/tls
configMapGenerator:
- name: settings
  literals:
  - ENDPOINT=https://api.example.com/v1
  - REPO=git@github.com:org/repo.git
  files:
  - nginx.conf
  - proxy.json=https-proxy.json
  envs:
  - urls.env
secretGenerator:
- name: creds
  literals:
  - URL=https://user:pass@example.com
images:
- name: nginx
  newName: registry.example.com:5000/mirror/nginx
  newTag: "1.27"
patches:
- path: patch-replicas.yaml
  target:
    kind: Deployment
    labelSelector: app=https-proxy
- target: {kind: Deployment, name: https-proxy}
  patch: |-
    - op: add
      path: /metadata/annotations/upstream
      value: https://upstream.example.com
replacements:
- source: {kind: ConfigMap, name: settings, fieldPath: data.ENDPOINT}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.metadata.annotations.endpoint]
    options: {create: true}
- path: replacements.yaml
transformers:
- |-
  apiVersion: builtin
  kind: AnnotationsTransformer
  metadata: {name: notes}
  annotations:
    runbook: https://runbooks.example.com/proxy
  fieldSpecs:
  - {path: metadata/annotations, create: true}
`,
		"https-proxy.yaml":                  deploy("https-proxy"),
		"github.com-mirror/svc.yaml":        "apiVersion: v1\nkind: Service\nmetadata:\n  name: mirror\nspec:\n  ports:\n  - port: 443\n",
		"httpbin/kustomization.yaml":        "resources:\n- deployment.yaml\n",
		"httpbin/deployment.yaml":           deploy("httpbin"),
		"components/tls/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nconfigMapGenerator:\n- name: tls\n  literals:\n  - ACME=https://acme-v02.api.letsencrypt.org/directory\n",
		"nginx.conf":                        "location ~ ^/api/(.*)\\.json$ {\n  proxy_pass https://upstream.example.com;\n}\n",
		"https-proxy.json":                  `{"upstream": "https://upstream.example.com", "dir": "C:\\proxy"}`,
		"urls.env":                          "API_URL=https://api.example.com\nGIT=git@github.com:org/repo.git\n# see https://example.com\n",
		"patch-replicas.yaml":               "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\n  annotations:\n    homepage: https://example.com\nspec:\n  replicas: 2\n",
		"replacements.yaml": "source: {kind: ConfigMap, name: settings, fieldPath: data.API_URL}\n" +
			"targets:\n- select: {kind: Deployment, name: httpbin}\n  fieldPaths: [metadata.annotations.api]\n  options: {create: true}\n",
	}), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(res), "ConfigMap/settings-92d7hg4bkm ConfigMap/tls-8d9hf859f9 Secret/creds-6d4k2dddhd Service/mirror Deployment/httpbin Deployment/https-proxy"; got != want {
		t.Errorf("documents %s, want %s", got, want)
	}
	out := string(res.YAML())
	for _, want := range []string{
		"runbook: https://runbooks.example.com/proxy", "upstream: https://upstream.example.com",
		"endpoint: https://api.example.com/v1", "api: https://api.example.com", "image: registry.example.com:5000/mirror/nginx:1.27",
		"ACME: https://acme-v02.api.letsencrypt.org/directory", "replicas: 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %q", want)
		}
	}
}
