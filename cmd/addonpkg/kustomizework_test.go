package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// A kustomize tree whose patches may touch more objects than the cap is
// refused by build and unpack with the flag that raises the cap, and
// renders once --max-patch-targets allows it; every command that
// renders a single add-on has both kustomize work flags.
func TestCLIKustomizeWorkLimits(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	// Over the default cap: refused before kustomize runs, so fast.
	const many, manyPatches = 990, 11 // 11 x (990 + 11) patch targets
	big := kustomizeWorkTree(t, many, manyPatches)
	limit := fmt.Sprintf("patch targets of %d: patch targets limit of %d exceeded", manyPatches*(many+manyPatches), safetree.DefaultMaxPatchTargets)
	cliCheckError(t, cliRun(t, "build", big, "-t", "work:1"), "kustomization.yaml: "+limit, "(raise it with --max-patch-targets)")
	cliCheckError(t, cliRun(t, "unpack", big), limit, "(raise it with --max-patch-targets)")

	// A cap set by the flag, and raised by it.
	const objects, patches = 200, 5 // 5 x (200 + 5) patch targets
	dir := kustomizeWorkTree(t, objects, patches)
	targets := patches * (objects + patches)
	cliCheckError(t, cliRun(t, "unpack", dir, fmt.Sprint("--max-patch-targets=", targets-1)), fmt.Sprintf("patch targets limit of %d exceeded", targets-1), "(raise it with --max-patch-targets)")
	cliCheckError(t, cliRun(t, "unpack", dir, "--max-kustomize-objects", "199"), "kustomize objects limit of 199 exceeded", "(raise it with --max-kustomize-objects)")
	out := cliMust(t, "unpack", dir, fmt.Sprint("--max-patch-targets=", targets))
	if !strings.Contains(out, "p4: v") {
		t.Errorf("unpack: the last patch is missing from\n%.300s", out)
	}
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	for _, name := range []string{"build", "unpack", "diff", "render", "apply"} {
		c, _, err := root.Find([]string{name})
		for _, flag := range []string{"max-kustomize-objects", "max-patch-targets"} {
			if err != nil || c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s (%v)", name, flag, err)
			}
		}
	}
}

// kustomizeWorkTree writes a kustomize tree of objects ConfigMaps and
// patches JSON patches of every ConfigMap, and returns its folder.
func kustomizeWorkTree(t *testing.T, objects, patches int) string {
	t.Helper()
	dir := t.TempDir()
	var cms, kust strings.Builder
	for i := range objects {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\n", i)
	}
	kust.WriteString("resources: [cms.yaml]\npatches:\n")
	for i := range patches {
		fmt.Fprintf(&kust, "- target: {kind: ConfigMap}\n  patch: '[{\"op\": \"add\", \"path\": \"/data\", \"value\": {\"p%d\": \"v\"}}]'\n", i)
	}
	must(t, os.WriteFile(filepath.Join(dir, "cms.yaml"), []byte(cms.String()), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust.String()), 0o644))
	return dir
}
