package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Flags that exclude each other, or one that needs another, are usage
// errors whichever command finds them: exit 1, the message, then the
// usage line, and nothing read or written. diff, apply, sign and lock did
// so; render, unpack, build and copy printed one bare line.
func TestFlagConflictsAreUsageErrors(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	src := cliExampleDir("coredns")
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-f", cliSet, "--lock", filepath.Join(dir, "x.lock"), "--no-lock"}, "--lock and --no-lock exclude each other"},
		{[]string{"render", "-f", cliSet, "--namespace", "x"}, "--namespace needs --cluster-resource-set"},
		{[]string{"render", "-f", cliSet, "--cluster-resource-set", "fleet", "--cluster-selector", "a=b", "--json"}, "--cluster-resource-set and --json exclude each other"},
		{[]string{"unpack", src, "--list", "-o", out}, "-o writes the tree: it does not go with --list or --raw"},
		{[]string{"unpack", src, "--raw", "-o", out}, "-o writes the tree: it does not go with --list or --raw"},
		{[]string{"unpack", src, "--relocate", "mirror.example.com", "--list"}, "--relocate rewrites the rendered stream"},
		{[]string{"build", src, "--delete", "x.yaml"}, "--delete needs --base"},
		{[]string{"build", src, "--layered"}, "--layered needs --base"},
		{[]string{"build", src, "--platform", "linux/amd64"}, "--platform needs --base"},
		{[]string{"copy", "oci:" + filepath.Join(dir, "a"), "oci:" + out, "--image-mirror", "mirror.example.com"}, "--image-mirror goes with --with-images"},
	} {
		r := cliRun(t, c.args...)
		want := "addonpkg: " + c.args[0] + ": " + c.want
		usage := "\nUsage: addonpkg " + c.args[0] + " "
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, usage) {
			t.Errorf("addonpkg %q: exit %d, stdout %.60q, stderr %q; want exit 1, %q and the usage line", c.args, r.code, r.stdout, r.stderr, want)
		}
	}
	if r := cliRun(t, "images", "--json"); r.stdout != "[]\n" {
		t.Errorf("refused builds stored something: %s", r.stdout)
	}
}

// cliCheckUsageError checks a usage error: exit 1, one 'addonpkg: ...'
// line that contains each of wants, then the usage line, and no stdout.
func cliCheckUsageError(t *testing.T, r cliOutcome, wants ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != 1 || r.stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "addonpkg: ") || !strings.HasPrefix(lines[1], "Usage: addonpkg ") {
		t.Errorf("exit %d, stdout %.60q, stderr %q; want exit 1, a message and the usage line", r.code, r.stdout, r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(lines[0], w) {
			t.Errorf("stderr %q does not contain %q", r.stderr, w)
		}
	}
}
