package render_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// configMaps is a file of n tiny ConfigMaps, cm0 to cm(n-1).
func configMaps(n int) string {
	return lines(n, func(i int) string {
		return fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  a: b", i)
	})
}

// kindPatches are n patches of a kustomization, each targeting every
// ConfigMap.
func kindPatches(n int) string {
	return "patches:\n" + lines(n, func(i int) string {
		return fmt.Sprintf("- target: {kind: ConfigMap}\n  patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: x}\n    data: {p%d: v}", i)
	})
}

// A kustomize tree is refused, before kustomize reads it, when it would
// make kustomize load more objects than MaxKustomizeObjects (its time is
// quadratic in them) or its patches touch more than MaxPatchTargets (a
// millisecond each): counted through bases included many times, List
// items and generators. Without the caps each hostile tree here takes
// kustomize minutes; with them it is refused at once, and a tree at the
// caps renders.
func TestKustomizeWorkCapped(t *testing.T) {
	// Eight levels of two bases each including the one below: 2^8 copies
	// of a file of 40 ConfigMaps, 10,240 objects from 2 KB.
	diamond := map[string]string{"kustomization.yaml": "resources: [l0a, l0b]\n", "l7a/cms.yaml": configMaps(40), "l7b/cms.yaml": configMaps(40)}
	for i := range 8 {
		next := fmt.Sprintf("[../l%da, ../l%db]", i+1, i+1)
		if i == 7 {
			next = "[cms.yaml]"
		}
		for _, ab := range []string{"a", "b"} {
			diamond[fmt.Sprintf("l%d%s/kustomization.yaml", i, ab)] = fmt.Sprintf("namePrefix: %s-\nresources: %s\n", ab, next)
		}
	}
	over := safetree.DefaultMaxKustomizeObjects + 1
	for _, tc := range []struct {
		name   string
		files  map[string]string
		limits render.Options
		which  safetree.LimitID // "" when it renders
	}{
		{"objects over the cap", map[string]string{"kustomization.yaml": "resources: [cms.yaml]\n", "cms.yaml": configMaps(over)}, render.Options{}, safetree.LimitKustomizeObjects},
		{"base included many times", diamond, render.Options{}, safetree.LimitKustomizeObjects},
		{"List items", map[string]string{
			"kustomization.yaml": "resources: [list.yaml]\n",
			"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" + lines(over, func(i int) string {
				return fmt.Sprintf("- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm%d}}", i)
			}),
		}, render.Options{}, safetree.LimitKustomizeObjects},
		{"generators", map[string]string{
			"kustomization.yaml": "configMapGenerator:\n" + lines(over, func(i int) string { return fmt.Sprintf("- name: g%d", i) }),
		}, render.Options{}, safetree.LimitKustomizeObjects},
		// 300 patches of every one of 300 ConfigMaps: 30 KB that took
		// kustomize 2 m 47 s.
		{"patches of every object", map[string]string{"kustomization.yaml": "resources: [cms.yaml]\n" + kindPatches(300), "cms.yaml": configMaps(300)}, render.Options{}, safetree.LimitPatchTargets},
		{"at the caps", map[string]string{"kustomization.yaml": "resources: [cms.yaml]\n" + kindPatches(2), "cms.yaml": configMaps(50)}, render.Options{MaxKustomizeObjects: 50, MaxPatchTargets: 2 * 52}, ""},
		{"one object over", map[string]string{"kustomization.yaml": "resources: [cms.yaml]\n" + kindPatches(2), "cms.yaml": configMaps(51)}, render.Options{MaxKustomizeObjects: 50, MaxPatchTargets: 200}, safetree.LimitKustomizeObjects},
		{"one target over", map[string]string{"kustomization.yaml": "resources: [cms.yaml]\n" + kindPatches(2), "cms.yaml": configMaps(50)}, render.Options{MaxKustomizeObjects: 50, MaxPatchTargets: 2*52 - 1}, safetree.LimitPatchTargets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, s := range tc.files {
				fsys[n] = &fstest.MapFile{Data: []byte(s)}
			}
			opts := tc.limits
			opts.Kind = addon.KindKustomize
			res, err := render.Render(context.Background(), fsys, opts)
			if tc.which == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Documents) != 50 || !strings.Contains(string(res.Documents[0].Raw), "p1: v") {
					t.Errorf("%d documents, the first patched? %s", len(res.Documents), res.Documents[0].Raw)
				}
				return
			}
			var le *safetree.LimitError
			var re *render.Error
			if !errors.As(err, &le) || le.Which != tc.which || !errors.As(err, &re) || re.File != "kustomization.yaml" {
				t.Fatalf("got %v, want the %s limit error of kustomization.yaml", err, tc.which)
			}
		})
	}
}

// Each transformer that a kustomization's lists make (an entry of images,
// replicas, replacements, transformers, validators; a key labels or
// commonAnnotations add) runs over every object, as a patch does: 300
// images over 300 Deployments took kustomize 16 s, over 1,000 108 s. They
// count toward MaxPatchTargets as patches do: 10 of them over 10 objects
// are 10 × (10 + 10) targets.
func TestKustomizeListTransformersCapped(t *testing.T) {
	ten := func(f func(int) string) string { return lines(10, f) }
	for _, tc := range []struct{ name, kust string }{
		{"images", "images:\n" + ten(func(i int) string { return fmt.Sprintf("- name: img%d\n  newTag: \"2\"", i) })},
		{"replicas", "replicas:\n" + ten(func(i int) string { return fmt.Sprintf("- name: cm%d\n  count: 2", i) })},
		{"labels", "labels:\n- pairs:\n" + ten(func(i int) string { return fmt.Sprintf("    l%d: v", i) })},
		{"commonAnnotations", "commonAnnotations:\n" + ten(func(i int) string { return fmt.Sprintf("  a%d: v", i) })},
		{"replacements", "replacements:\n" + ten(func(i int) string {
			return fmt.Sprintf("- source: {kind: ConfigMap, name: cm0}\n  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [metadata.annotations.r%d]\n    options: {create: true}", i)
		})},
		{"transformers", "transformers:\n" + ten(func(i int) string {
			return fmt.Sprintf("- |\n  apiVersion: builtin\n  kind: AnnotationsTransformer\n  metadata:\n    name: a%d\n  annotations:\n    a%d: v\n  fieldSpecs:\n  - path: metadata/annotations\n    create: true", i, i)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"kustomization.yaml": &fstest.MapFile{Data: []byte("resources: [cms.yaml]\n" + tc.kust)},
				"cms.yaml":           &fstest.MapFile{Data: []byte(configMaps(10))},
			}
			_, err := render.Render(context.Background(), fsys, render.Options{Kind: addon.KindKustomize, MaxPatchTargets: 10*20 - 1})
			var le *safetree.LimitError
			if !errors.As(err, &le) || le.Which != safetree.LimitPatchTargets {
				t.Errorf("10 transformers over 10 objects, a cap of 199: err = %v; want the patch-targets limit", err)
			}
			// At the cap the tree is kustomize's to judge (replicas of a
			// ConfigMap it refuses).
			if _, err := render.Render(context.Background(), fsys, render.Options{Kind: addon.KindKustomize, MaxPatchTargets: 10 * 20}); errors.As(err, &le) {
				t.Errorf("at the cap: %v", err)
			}
		})
	}
}
