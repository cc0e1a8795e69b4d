package main

import (
	"os"
	"path/filepath"
	"testing"
)

// kustomize prints a kustomization's deprecated fields on the process's
// os.Stderr and logs the vars it never replaced through the standard
// logger, and pkg/render leaves both alone: it returns both conditions
// as warnings, named with their kustomization, which the command, which
// owns the process, says once each, made printable (a var's name is the
// add-on's text), and kustomize's own copies say nothing. Run as a real
// process: main is what points the process's output.
func TestKustomizeOutputIsCommandWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	must(t, os.MkdirAll(tree, 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "kustomization.yaml"), []byte(`resources:
- a.yaml
commonLabels:
  app: x
vars:
- name: "UNUSED\e[2J"
  objref: {kind: ConfigMap, name: a, apiVersion: v1}
  fieldref: {fieldpath: metadata.name}
`), 0o644))
	must(t, os.WriteFile(filepath.Join(tree, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644))
	r := hostileCLIRun(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, "unpack", tree)
	want := "addonpkg: warning: kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n" +
		"addonpkg: warning: kustomization.yaml: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically.\n" +
		"addonpkg: warning: kustomization.yaml: well-defined vars that were never replaced: UNUSED?[2J\n"
	if r.code != 0 || r.stderr != want {
		t.Errorf("unpack: exit %d, stderr\n%q\nwant\n%q", r.code, r.stderr, want)
	}
}
