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
// or declaration that is a folder "read F: read F: is a directory"; it
// says "-o F: is a directory" now (TestInputPathErrorsOneForm).
func TestPathErrorsNameThePathOnce(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	must(t, os.MkdirAll(filepath.Join(full, "x"), 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-f", cliSet, "-o", full}, "addonpkg: -o " + full + ": output directory is not empty\n"},
		{[]string{"lock", "-f", cliSet, "-o", full}, "addonpkg: -o " + full + ": is a directory\n"},
		{[]string{"render", "-f", tmp}, "addonpkg: -f " + tmp + ": is a directory (-f takes an add-on set's declaration, not a manifest or folder; to render one add-on: addonpkg unpack " + tmp + ")\n"},
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
	t.Parallel()
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
	t.Parallel()
	cliNewHome(t)
	priv, _ := cliKeys(t, "a")
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	cliMust(t, "sign", "--key", priv, "coredns:1")
	r := cliRun(t, "copy", "coredns:1", "oci-archive:"+filepath.Join(t.TempDir(), "c.tar"))
	if want := "copied 1 referrer (a signature, SBOM or attestation)\n"; r.code != 0 || r.stderr != want {
		t.Errorf("copy: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
}

// A file or folder named on the command line that cannot be read is said
// in one form by every command, "NAME PATH: PROBLEM", naming the flag or
// the argument (as the usage line names it) and the path as given. It
// was said three ways: "read source ./x: ...", "open x.yaml: ..." and
// "--key: unusable key: open k.pem: ...".
func TestInputPathErrorsOneForm(t *testing.T) {
	cliNewHome(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	tmp := t.TempDir()
	nope, dir := filepath.Join(tmp, "nope"), filepath.Join(tmp, "dir")
	must(t, os.MkdirAll(dir, 0o755))
	file := filepath.Join(tmp, "file")
	must(t, os.WriteFile(file, []byte("x"), 0o644))
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	const enoent, eisdir, enotdir = ": no such file or directory\n", ": is a directory\n", ": not a directory\n"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", nope}, 1, "PATH " + nope + enoent},
		{[]string{"inspect", nope}, 1, "SOURCE " + nope + enoent},
		// A bare word that is no reference nor a file ("invalid source:
		// \"x.yaml\" is neither..." named neither the argument nor the form).
		{[]string{"unpack", "x.yaml"}, 1, "SOURCE x.yaml: invalid source: neither a reference nor an existing path\n"},
		{[]string{"apply", "x.yaml"}, 1, "SOURCE x.yaml: invalid source: neither a reference nor an existing path\n"},
		{[]string{"unpack", nope}, 1, "SOURCE " + nope + enoent},
		{[]string{"inspect", "oci-archive:" + nope}, 1, "SOURCE oci-archive:" + nope + enoent},
		// An OCI layout folder that is not there, or is no layout
		// ("nope: not an OCI image layout ..." named no argument).
		{[]string{"inspect", "oci:" + nope}, 1, "SOURCE oci:" + nope + ": not an OCI image layout (no such directory)\n"},
		{[]string{"inspect", "oci:" + dir + ":v1"}, 1, "SOURCE oci:" + dir + ":v1: not an OCI image layout (no oci-layout file)\n"},
		{[]string{"build", cliExampleDir("coredns"), "-o", "oci:" + tmp + ":v1"}, 1, "-o oci:" + tmp + ":v1: not an OCI image layout: the folder holds other files (dir); give a new or empty folder\n"},
		{[]string{"copy", "oci-archive:" + nope, "oci:" + dir}, 1, "SRC oci-archive:" + nope + enoent},
		{[]string{"diff", nope, cliExampleDir("coredns")}, 2, "A " + nope + enoent},
		{[]string{"diff", cliExampleDir("coredns"), nope}, 2, "B " + nope + enoent},
		{[]string{"lock", "-f", nope}, 1, "-f " + nope + enoent},
		{[]string{"render", "-f", nope}, 1, "-f " + nope + enoent},
		{[]string{"mirror", "-f", nope, "--to", "oci-archive:" + filepath.Join(tmp, "x.tar")}, 1, "-f " + nope + enoent},
		{[]string{"apply", "-f", nope}, 1, "-f " + nope + enoent},
		{[]string{"lock", "-f", cliSet, "-o", dir}, 1, "-o " + dir + eisdir},
		{[]string{"sign", "--key", nope, "x:1"}, 1, "--key " + nope + enoent},
		{[]string{"sign", "--key", dir, "x:1"}, 1, "--key " + dir + eisdir},
		// A file that is there but is no key: the same form.
		{[]string{"verify", "--key", file, "x:1"}, 1, "--key " + file + ": unusable key: PEM decoding failed\n"},
		{[]string{"unpack", "--verify-key", file, "x:1"}, 1, "--verify-key " + file + ": unusable key: PEM decoding failed\n"},
		{[]string{"unpack", cliExampleDir("coredns"), "--values", nope}, 1, "--values " + nope + enoent},
		{[]string{"conformance", "run", "--vectors", nope}, 1, "--vectors " + nope + enoent},
		// Outputs: a file where a folder must be, as the output or above it.
		{[]string{"unpack", "coredns:1", "-o", file}, 1, "-o " + file + enotdir},
		{[]string{"render", "-f", cliSet, "-o", file}, 1, "-o " + file + enotdir},
		{[]string{"lock", "-f", cliSet, "-o", file + "/x.lock"}, 1, "-o " + file + "/x.lock: make folder " + file + enotdir},
		{[]string{"build", cliExampleDir("coredns"), "-o", "oci-archive:" + file + "/x.tar"}, 1, "-o oci-archive:" + file + "/x.tar: make folder " + file + enotdir},
		{[]string{"copy", "coredns:1", "oci-archive:" + file + "/x.tar"}, 1, "DST oci-archive:" + file + "/x.tar: make folder " + file + enotdir},
		{[]string{"mirror", "-f", cliSet, "--to", "oci-archive:" + file + "/x.tar"}, 1, "--to oci-archive:" + file + "/x.tar: make folder " + file + enotdir},
	} {
		r := cliRun(t, c.args...)
		if r.code != c.code || r.stderr != "addonpkg: "+c.want {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit %d, %q", c.args, r.code, r.stderr, c.code, "addonpkg: "+c.want)
		}
	}
}

// A path error is named by the flag or argument that gives the path,
// however the path is written, and never by a flag that takes no path:
// -o DIR/ said "write DIR: output directory is not empty", not naming
// -o, and -f X --context X said "--context X: no such file or
// directory" (a kubeconfig context that happens to read as the path).
func TestInputErrorNamesThePathsFlag(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	tmp := t.TempDir()
	nope, full := filepath.Join(tmp, "nope"), filepath.Join(tmp, "full")
	must(t, os.MkdirAll(filepath.Join(full, "x"), 0o755))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"unpack", cliExampleDir("coredns"), "-o", full + "/"}, "-o " + full + "/: output directory is not empty\n"},
		{[]string{"unpack", cliExampleDir("coredns"), "-o", tmp + "/./full"}, "-o " + tmp + "/./full: output directory is not empty\n"},
		{[]string{"apply", "-f", nope, "--context", nope, "--kubeconfig", filepath.Join(tmp, "kubeconfig")}, "-f " + nope + ": no such file or directory\n"},
	} {
		r := cliRun(t, c.args...)
		if r.code != 1 || r.stderr != "addonpkg: "+c.want {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, %q", c.args, r.code, r.stderr, "addonpkg: "+c.want)
		}
	}
}
