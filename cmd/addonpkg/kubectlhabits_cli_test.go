package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kubectl user types -o yaml or -o jsonpath=... by habit. Where -o
// names what to write (render's and unpack's DIR, lock's and mirror's
// file, build's oci:DIR...), such a value is refused as the flag is
// parsed, exit 1 with the usage line, saying what the command prints
// instead, and nothing is written: render -o yaml wrote a folder named
// yaml. A folder of that name that exists, or one written as a path
// (./yaml), is taken as given.
func TestPathOutputRefusesKubectlFormats(t *testing.T) {
	cliNewHome(t)
	set, err := filepath.Abs(cliSet)
	must(t, err)
	coredns, err := filepath.Abs(cliExampleDir("coredns"))
	must(t, err)
	cliMust(t, "build", coredns, "-t", "coredns:1")
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"render", "-f", set, "-o", "yaml"}, "render prints the YAML stream on stdout without -o"},
		{[]string{"render", "-f", set, "--output=json"}, "render prints the YAML stream on stdout without -o"},
		{[]string{"render", "-f", set, "-o", "jsonpath={.items}"}, "(to write a new jsonpath={.items}, give ./jsonpath={.items})"},
		{[]string{"unpack", "coredns:1", "-o", "yaml"}, "unpack prints the rendered YAML stream on stdout without -o"},
		{[]string{"unpack", "coredns:1", "-o", "go-template={{.}}"}, "unpack prints the rendered YAML stream"},
		{[]string{"lock", "-f", set, "-o", "json"}, "lock prints the lock as JSON with --json"},
		{[]string{"mirror", "-f", set, "--to", "oci-archive:x.tar", "-o", "yaml"}, "mirror prints the mirrored lock as JSON with --json"},
		{[]string{"build", coredns, "-o", "yaml"}, "not kubectl's output format yaml: build prints the digest"},
		{[]string{"build", coredns, "-o", "no-transport"}, "want oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REFERENCE]"},
	} {
		r := cliRun(t, c.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 1 || r.stdout != "" || !strings.Contains(first, c.hint) || !strings.Contains(r.stderr, "\nUsage: addonpkg "+c.args[0]) {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit 1, %q and the usage line", c.args, r.code, r.stdout, r.stderr, c.hint)
		}
		if entries, _ := os.ReadDir("."); len(entries) > 0 {
			t.Errorf("addonpkg %q wrote %s", c.args, entries[0].Name())
			for _, e := range entries {
				must(t, os.RemoveAll(e.Name()))
			}
		}
	}
	// What exists, or is written as a path, is written to.
	must(t, os.Mkdir("yaml", 0o755))
	must(t, os.Mkdir("json", 0o755))
	cliMust(t, "render", "-f", set, "-o", "yaml")
	cliMust(t, "unpack", "coredns:1", "-o", "json")
	cliMust(t, "render", "-f", set, "-o", "./name")
	cliMust(t, "lock", "-f", set, "-o", "./wide")
	for _, f := range []string{"yaml/01-coredns.yaml", "json/coredns.yaml", "name/01-coredns.yaml", "wide"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
}

// diff exits 0 when the add-ons render the same, 1 when they differ and
// 2 on trouble, as kubectl diff and git diff --exit-code, with or without
// --quiet; --quiet prints nothing but an error, as git diff --quiet (it
// printed the diff), and does not go with --json.
func TestDiffQuietPrintsNothing(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	coredns, metrics := cliExampleDir("coredns"), cliExampleDir("metrics-server")
	for _, c := range []struct {
		args   []string
		code   int
		stdout bool // prints something on stdout
		stderr bool
	}{
		{[]string{"diff", coredns, coredns}, 0, true, false},
		{[]string{"diff", coredns, metrics}, 1, true, false},
		{[]string{"diff", "-q", coredns, coredns}, 0, false, false},
		{[]string{"diff", "--quiet", coredns, metrics}, 1, false, false},
		{[]string{"diff", "-q", coredns, "no-such:1", "--pull", "never"}, 2, false, true},
		{[]string{"diff", "-q", coredns, metrics, "--no-such-flag"}, 2, false, true},
		{[]string{"diff", "-q", "--json", coredns, metrics}, 2, false, true},
	} {
		r := cliRun(t, c.args...)
		if r.code != c.code || (r.stdout != "") != c.stdout || (r.stderr != "") != c.stderr {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr %q; want exit %d, stdout: %v, stderr: %v", c.args, r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
		}
	}
}

// kubectl's apply --dry-run=client is refused by apply, which has only a
// server dry-run, saying that unpack prints the objects without a
// cluster; it said "want none or server" alone.
func TestApplyDryRunClientSaysUnpack(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	r := cliRun(t, "apply", "./x", "--dry-run=client")
	const want = "addonpkg: apply: invalid argument \"client\" for \"--dry-run\" flag: want none or server: apply has no client dry-run ('addonpkg unpack SOURCE' prints the objects it would send, without a cluster)\n"
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "\nUsage: addonpkg apply") {
		t.Errorf("exit %d, stderr %q; want exit 1, %q and the usage line", r.code, r.stderr, want)
	}
	if r := cliRun(t, "apply", "./x", "--dry-run=bogus"); r.code != 1 || !strings.Contains(r.stderr, `"--dry-run" flag: want none or server`+"\n") {
		t.Errorf("--dry-run=bogus: exit %d, stderr %q", r.code, r.stderr)
	}
}

// kubectl's -f takes manifests; addonpkg's -f an add-on set's
// declaration. Given a manifest, a kustomization or a folder, apply,
// render, lock, mirror and uninstall say what -f takes and, where the
// command has one, how it takes one add-on: apply -f manifest.yaml said
// "invalid add-on set: more than one YAML document".
func TestSetFileGivenAManifest(t *testing.T) {
	cliNewHome(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const takes = "(-f takes an add-on set's declaration, not a manifest or folder"
	coredns, metrics := cliExampleDir("coredns"), cliExampleDir("metrics-server")
	manifest, kustomization := filepath.Join(coredns, "coredns.yaml"), filepath.Join(metrics, "kustomization.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", manifest}, `not an add-on set: kind "ServiceAccount", want "AddonSet" ` + takes + "; to apply one add-on: addonpkg apply " + manifest + ")"},
		{[]string{"apply", "-f", coredns, "--dry-run"}, "is a directory " + takes + "; to apply one add-on: addonpkg apply " + coredns + ")"},
		{[]string{"render", "-f", kustomization}, `kind "Kustomization", want "AddonSet" ` + takes + "; to render one add-on: addonpkg unpack " + metrics + ")"},
		{[]string{"lock", "-f", coredns}, "is a directory " + takes + ")"},
		{[]string{"mirror", "-f", manifest, "--to", "oci-archive:x.tar"}, takes + "; to copy one add-on: addonpkg copy " + manifest + " DST)"},
		{[]string{"uninstall", "-f", manifest}, takes + ")"},
	} {
		r := cliRun(t, c.args...)
		if r.code != 1 || r.stdout != "" || !strings.HasSuffix(r.stderr, c.want+"\n") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit 1, one line ending %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// Another tool's word for a command is answered with the command alone:
// helm install suggested uninstall (two letters off), helm template,
// package and show, docker save, load and rmi nothing or a wrong one. A
// misspelling still gets cobra's suggestions.
func TestOtherToolsWordsSuggestTheCommand(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	for word, want := range map[string]string{
		"install": "apply", "upgrade": "apply", "template": "unpack", "package": "build",
		"show": "inspect", "describe": "inspect", "save": "copy", "load": "copy", "remove": "rm", "rmi": "rm",
		"biuld": "build",
	} {
		r := cliRun(t, word, "x")
		wantErr := "addonpkg: unknown command \"" + word + "\"\nDid you mean this?\n    addonpkg " + want + "\nRun 'addonpkg --help' for the commands.\n"
		if r.code != 1 || r.stderr != wantErr {
			t.Errorf("addonpkg %s: exit %d, stderr %q; want %q", word, r.code, r.stderr, wantErr)
		}
	}
}
