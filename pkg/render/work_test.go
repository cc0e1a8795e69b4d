package render

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func TestCountKustomizeWork(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
	base := map[string]string{
		"base/kustomization.yaml": "resources: [cms.yaml, d.yaml]\n",
		"base/cms.yaml":           cm("a") + "---\n" + cm("b") + "---\n" + cm("c"),
		"base/d.yaml":             deploy,
	}
	for _, tc := range []struct {
		name             string
		files            map[string]string
		objects, targets int64
	}{
		{"documents", map[string]string{"kustomization.yaml": "resources: [base]\n"}, 4, 0},
		{"List items", map[string]string{
			"kustomization.yaml": "resources: [list.yaml]\n",
			"list.yaml":          "apiVersion: v1\nkind: List\nitems:\n- " + "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
		}, 2, 0},
		// A base included twice (two prefixes) is loaded twice.
		{"diamond", map[string]string{
			"kustomization.yaml":     "resources: [one, two]\n",
			"one/kustomization.yaml": "namePrefix: one-\nresources: [../base]\n",
			"two/kustomization.yaml": "namePrefix: two-\nresources: [../base]\n",
		}, 8, 0},
		// (A generator named y is none: kustomize decodes y as YAML 1.1's
		// true, and refuses the kustomization.)
		{"generators", map[string]string{
			"kustomization.yaml": "resources: [base]\nconfigMapGenerator:\n- name: x\n- name: v\nsecretGenerator:\n- name: z\n",
		}, 7, 0},
		// Each patch counts every object of its kustomization (kustomize
		// looks at each whatever the patch's kind or target) and every
		// patch of it (each may grow what the next touches).
		{"patches without a target", map[string]string{
			"kustomization.yaml": "resources: [base]\npatches:\n- path: p.yaml\npatchesStrategicMerge:\n- |\n  " + "apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n",
			"p.yaml":             cm("a"),
		}, 4, 2 * (4 + 2)},
		{"target of a kind", map[string]string{
			"kustomization.yaml": "resources: [base]\npatches:\n- target: {kind: Deployment}\n  patch: |\n    - {op: add, path: /x, value: 1}\n",
		}, 4, 1 * (4 + 1)},
		{"targets", map[string]string{
			"kustomization.yaml": "resources: [base]\npatches:\n- target: {kind: Config.*}\n  path: p.json\n- target: {name: a}\n  path: p.json\npatchesJson6902:\n- target: {version: v1, kind: ConfigMap, name: a}\n  path: p.json\n",
			"p.json":             "[]",
		}, 4, 3 * (4 + 3)},
		// A component's patches apply to the objects of the kustomization
		// that includes it, its own included.
		{"component", map[string]string{
			"kustomization.yaml":      "resources: [base]\ncomponents: [comp]\n",
			"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: '[]'\n",
			"comp/cm.yaml":            cm("d"),
		}, 5, 1 * (5 + 1)},
		// The patches of a base count where the base applies them, once
		// for each time it is included.
		{"patches in a base, twice", map[string]string{
			"kustomization.yaml":     "resources: [one, two]\n",
			"one/kustomization.yaml": "namePrefix: one-\nresources: [../base]\npatches:\n- target: {kind: ConfigMap}\n  patch: '[]'\n",
			"two/kustomization.yaml": "namePrefix: two-\nresources: [../one]\n",
		}, 8, 2 * 1 * (4 + 1)},
		{"cycle", map[string]string{
			"kustomization.yaml":   "resources: [a]\n",
			"a/kustomization.yaml": "resources: [../b, ../base]\n",
			"b/kustomization.yaml": "resources: [../a]\n",
		}, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, files := range []map[string]string{base, tc.files} {
				for n, s := range files {
					fsys[n] = &fstest.MapFile{Data: []byte(s)}
				}
			}
			w := countKustomizeWork(fsys)
			if w.objects != tc.objects || w.targets != tc.targets {
				t.Errorf("objects %d, patch targets %d; want %d, %d", w.objects, w.targets, tc.objects, tc.targets)
			}
		})
	}
}

// TestRealKustomizeWorkUnderDefaults counts the real kustomize trees of
// the repository (upstream add-ons and the examples): each must stay a
// tenth of the default caps or less.
func TestRealKustomizeWorkUnderDefaults(t *testing.T) {
	limits := safetree.Limits{}.WithDefaults()
	var most kustomizeWork
	for _, root := range []string{"../../e2e/testdata/real-addons", "../../examples"} {
		fsys := os.DirFS(root)
		err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !isKustomization(name) {
				return err
			}
			w := newKustomizeGraph(fsys).dir(path.Dir(name))
			t.Logf("%s: %d objects, %d patch targets", filepath.Join(root, path.Dir(name)), w.objects, w.targets)
			most.objects, most.targets = max(most.objects, w.objects), max(most.targets, w.targets)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("largest: %d objects (default cap %d), %d patch targets (default cap %d)", most.objects, limits.MaxKustomizeObjects, most.targets, limits.MaxPatchTargets)
	if most.objects == 0 {
		t.Fatal("no real kustomize tree counted")
	}
	if most.objects*10 > int64(limits.MaxKustomizeObjects) || most.targets*10 > int64(limits.MaxPatchTargets) {
		t.Error("a real add-on is within a tenth of the default caps")
	}
}
