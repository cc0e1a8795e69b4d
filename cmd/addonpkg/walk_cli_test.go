package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build takes -o for --output, as unpack, render, lock and mirror take
// it for theirs (and docker build -o): `build PATH -o oci:DIR` writes the
// layout, where it was refused with a hint about JSON.
func TestBuildShortOutput(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := filepath.Join(t.TempDir(), "layout")
	r := lcRun(t, "build", filepath.Join("..", "..", "examples", "metrics-server"), "-o", "oci:"+dir+":1")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "sha256:") {
		t.Fatalf("build -o: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Errorf("build -o oci:DIR wrote no layout: %v", err)
	}
}

// A command's flag given before the command (addonpkg --json images, as
// kubectl takes --context before get) is refused by the root, for cobra
// takes the command's name for the flag's value: the error says where
// the flag goes, and points at the help, as an unknown command does.
func TestRootUnknownFlagSaysWhereItGoes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", "images"}, "addonpkg: unknown flag: --json\n--json is a flag of images: give it after the command (addonpkg images --json ...)\nRun 'addonpkg --help' for the commands.\n"},
		{[]string{"-q", "push", "x"}, "addonpkg: unknown shorthand flag: 'q' in -q\n-q is a flag of push: give it after the command (addonpkg push -q ...)\nRun 'addonpkg --help' for the commands.\n"},
		{[]string{"--bogus"}, "addonpkg: unknown flag: --bogus\nRun 'addonpkg --help' for the commands.\n"},
	} {
		r := cliRun(t, c.args...)
		if r.code != 1 || r.stderr != c.want || r.stdout != "" {
			t.Errorf("addonpkg %q: exit %d, stdout %q, stderr\n%s\nwant exit 1, stderr\n%s", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// render, lock and mirror run where no addons.yaml is (the commands
// tried bare) say what they read and how to name it, as a missing
// argument does, with the usage line; an -f FILE that is missing is the
// file's own error.
func TestSetCommandsWithoutDeclaration(t *testing.T) {
	lcHome(t)
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"render"}, 1, "addonpkg: render: no addons.yaml here: give the add-on set's declaration with -f FILE (one add-on renders with addonpkg unpack SOURCE)\nUsage: addonpkg render "},
		{[]string{"lock"}, 1, "addonpkg: lock: no addons.yaml here: give the add-on set's declaration with -f FILE\nUsage: addonpkg lock "},
		{[]string{"lock", "--check"}, 2, "addonpkg: lock: no addons.yaml here"},
		{[]string{"mirror", "--to", "oci-archive:x.tar"}, 1, "addonpkg: mirror: no addons.yaml here"},
		{[]string{"render", "-f", "nope.yaml"}, 1, "addonpkg: -f nope.yaml: no such file or directory\n"},
	} {
		r := lcRun(t, c.args...)
		if r.code != c.code || !strings.HasPrefix(r.stderr, c.want) {
			t.Errorf("addonpkg %q: exit %d, stderr %q; want exit %d, %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}
