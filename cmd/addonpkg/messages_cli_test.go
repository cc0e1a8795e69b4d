package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An error names the path it is about once: render -o into a folder that
// is not empty said "DIR: DIR: output directory is not empty", and a lock
// or declaration that is a folder "read F: read F: is a directory".
func TestPathErrorsNameThePathOnce(t *testing.T) {
	cliNewHome(t)
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	must(t, os.MkdirAll(filepath.Join(full, "x"), 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-f", cliSet, "-o", full}, "addonpkg: " + full + ": output directory is not empty\n"},
		{[]string{"lock", "-f", cliSet, "-o", full}, "addonpkg: read " + full + ": is a directory\n"},
		{[]string{"render", "-f", tmp}, "addonpkg: read " + tmp + ": is a directory (-f takes an add-on set's declaration, not a manifest or folder; to render one add-on: addonpkg unpack " + tmp + ")\n"},
	} {
		r := cliRun(t, c.args...)
		if r.code != 1 || r.stderr != c.want || strings.Count(r.stderr, full) > 1 {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// build, unpack, render, lock and mirror say more on stderr than their
// errors (kustomize's warnings, what they wrote): -q/--quiet silences it,
// as it does for push, copy and apply (they had no --quiet), and every
// warning reads "addonpkg: warning: " (build's Flux warnings, unpack's
// stale labels and relocation's said "warning: ").
func TestQuietSilencesNotes(t *testing.T) {
	cliNewHome(t)
	tmp := t.TempDir()
	kw := filepath.Join(tmp, "kw")
	must(t, os.MkdirAll(kw, 0o755))
	must(t, os.WriteFile(filepath.Join(kw, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644))
	// kustomize warns of commonLabels, deprecated.
	must(t, os.WriteFile(filepath.Join(kw, "kustomization.yaml"), []byte("commonLabels: {a: b}\nresources: [cm.yaml]\n"), 0o644))
	for i, quiet := range []bool{false, true} {
		out := func(name string) string { return filepath.Join(tmp, fmt.Sprint(i), name) }
		for _, args := range [][]string{
			{"build", kw},
			{"build", kw, "--compression", "zstd", "-t", "kw:zstd"}, // Flux reads only gzip
			{"unpack", kw},
			{"lock", "-f", cliSet, "-o", out("set.lock")},
			{"render", "-f", cliSet, "-o", out("manifests")},
			{"mirror", "-f", cliSet, "--to", "oci-archive:" + out("set.tar"), "-o", out("mirror.yaml")},
		} {
			if quiet {
				args = append(args, "-q")
			}
			r := cliRun(t, args...)
			switch {
			case r.code != 0:
				t.Errorf("addonpkg %q: exit %d, stderr %q", args, r.code, r.stderr)
			case quiet && r.stderr != "":
				t.Errorf("addonpkg %q: stderr %q, want nothing", args, r.stderr)
			case !quiet && r.stderr == "":
				t.Errorf("addonpkg %q: nothing on stderr; the test needs a note or warning", args)
			}
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.HasPrefix(l, "warning: ") {
					t.Errorf("addonpkg %q: %q, want addonpkg: warning:", args, l)
				}
			}
		}
	}
}

// One referrer copied is "1 referrer", not "1 referrers".
func TestCopiedReferrersCounted(t *testing.T) {
	cliNewHome(t)
	priv, _ := cliKeys(t, "a")
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	cliMust(t, "sign", "--key", priv, "coredns:1")
	r := cliRun(t, "copy", "coredns:1", "oci-archive:"+filepath.Join(t.TempDir(), "c.tar"))
	if want := "copied 1 referrer (a signature, SBOM or attestation)\n"; r.code != 0 || r.stderr != want {
		t.Errorf("copy: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
}
