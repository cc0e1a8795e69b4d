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

// A kustomize tree with one mapping wider than the default cap is
// refused by build and unpack with the flag that raises the cap, and
// renders once --max-mapping-keys allows it; every command that renders
// a single add-on has the flag.
func TestCLIMappingKeysLimit(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	keys := safetree.DefaultMaxMappingKeys + 1
	dir := t.TempDir()
	var cm strings.Builder
	cm.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ndata:\n")
	for i := range keys {
		fmt.Fprintf(&cm, "  k%d: v\n", i)
	}
	must(t, os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(cm.String()), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- cm.yaml\n"), 0o644))
	raise := fmt.Sprint("--max-mapping-keys=", keys)
	limit := fmt.Sprintf("a mapping of %d keys: mapping keys limit of %d exceeded", keys, safetree.DefaultMaxMappingKeys)

	cliCheckError(t, cliRun(t, "build", dir, "-t", "wide:1"), "cm.yaml:6: "+limit, "(raise it with --max-mapping-keys)")
	cliCheckError(t, cliRun(t, "unpack", dir), "cm.yaml:6: "+limit, "(raise it with --max-mapping-keys)")
	cliMust(t, "build", dir, "-t", "wide:1", raise)
	cliCheckError(t, cliRun(t, "unpack", "wide:1"), limit, "(raise it with --max-mapping-keys)")
	out := cliMust(t, "unpack", "wide:1", raise)
	if !strings.Contains(out, fmt.Sprintf("k%d: v\n", keys-1)) {
		t.Errorf("unpack %s: the last key is missing from\n%.300s", raise, out)
	}
	if d := cliRun(t, "diff", "wide:1", dir, raise); d.code != 0 {
		t.Errorf("diff %s: exit %d: %s", raise, d.code, d.stderr)
	}
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	for _, name := range []string{"build", "unpack", "diff", "render", "apply"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Flags().Lookup("max-mapping-keys") == nil {
			t.Errorf("%s has no --max-mapping-keys (%v)", name, err)
		}
	}
}
