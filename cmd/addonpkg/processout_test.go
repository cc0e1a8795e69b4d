package main

import (
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kustomize prints a kustomization's deprecated fields on the process's
// os.Stderr and logs through the standard logger, and pkg/render leaves
// both alone: the command, which owns the process, says each deprecated
// field once, as its own warning, and turns kustomize's log lines into
// warnings made printable (a var's name is the add-on's text). Run as a
// real process: main is what points the process's output.
func TestKustomizeOutputIsCommandWarnings(t *testing.T) {
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
	want := "addonpkg: warning: well-defined vars that were never replaced: UNUSED?[2J\n" +
		"addonpkg: warning: kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n" +
		"addonpkg: warning: kustomization.yaml: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically.\n"
	if r.code != 0 || r.stderr != want {
		t.Errorf("unpack: exit %d, stderr\n%q\nwant\n%q", r.code, r.stderr, want)
	}
}

// The standard logger's lines are the command's warnings: one line each,
// made printable, and none with --quiet, as the render's own warnings.
func TestLogLinesAreWarnings(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		var stderr strings.Builder
		a := &app{stderr: &stderr, quiet: quiet}
		l := log.New(logWarnings{a}, "", 0)
		l.Print("well-defined vars that were never replaced: X\x1b[2J\nsecond")
		want := "addonpkg: warning: well-defined vars that were never replaced: X?[2J\naddonpkg: warning: second\n"
		if quiet {
			want = ""
		}
		if stderr.String() != want {
			t.Errorf("quiet %v: stderr %q, want %q", quiet, stderr.String(), want)
		}
	}
}
