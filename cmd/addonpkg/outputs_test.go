package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOutputsMakeTheirFolders: every kind of output (oci:DIR,
// oci-archive:FILE, docker-archive:FILE, -o DIR of unpack and render, a
// lock file, mirror's archive and declaration) makes the folders above it
// that are missing, as -o DIR always did: one rule, in
// internal/atomicfile. A path through a regular file is refused in one
// line naming the output, and nothing is written. (README's `mirror --to
// oci-archive:set/addons.tar -o set/addons.yaml` failed with "stat
// /tmp/set: no such file or directory" on a machine where no earlier run
// had left /tmp/set.)
func TestOutputsMakeTheirFolders(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	tmp := t.TempDir()
	p := func(rel string) string { return filepath.Join(tmp, filepath.FromSlash(rel)) }
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1",
		"--output", "oci:"+p("build/layout/x"),
		"--output", "oci-archive:"+p("build/archive/x/c.tar"),
		"--output", "docker-archive:"+p("build/docker/x/c.tar"))
	cliMust(t, "unpack", "coredns:1", "-o", p("unpack/x/tree"))
	cliMust(t, "copy", "coredns:1", "oci-archive:"+p("copy/x/c.tar"))
	cliMust(t, "copy", "coredns:1", "oci:"+p("copy/layout/x"))
	cliMust(t, "lock", "-f", cliSet, "-o", p("lock/x/set.lock"))
	cliMust(t, "render", "-f", cliSet, "-o", p("render/x/manifests"))
	mirrored := cliMust(t, "mirror", "-f", cliSet, "--to", "oci-archive:"+p("mirror/archive/set.tar"), "-o", p("mirror/decl/set.yaml"))
	// What mirror prints is read from here, the archive as --to named it
	// (not relative to the mirrored declaration, as its lock names it).
	for _, ref := range strings.Fields(mirrored) {
		if !strings.HasPrefix(ref, "oci-archive:"+p("mirror/archive/set.tar")+"@sha256:") {
			t.Errorf("mirror printed %q, want the archive as --to named it", ref)
			continue
		}
		cliMust(t, "inspect", ref)
	}
	for _, f := range []string{
		"build/layout/x/index.json", "build/archive/x/c.tar", "build/docker/x/c.tar",
		"unpack/x/tree/coredns.yaml", "copy/x/c.tar", "copy/layout/x/index.json",
		"lock/x/set.lock", "render/x/manifests/01-coredns.yaml",
		"mirror/archive/set.tar", "mirror/decl/set.yaml", "mirror/decl/set.lock",
	} {
		if _, err := os.Stat(p(f)); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
	// The mirrored declaration names the archive relative to itself, and
	// renders from it.
	cliMust(t, "render", "-f", p("mirror/decl/set.yaml"))

	// A folder that cannot be made: one line naming the output.
	if err := os.WriteFile(p("file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"build", cliExampleDir("coredns"), "-t", "coredns:2", "--output", "oci-archive:" + p("file/x/c.tar")},
		{"copy", "coredns:1", "oci:" + p("file/x/layout")},
		{"lock", "-f", cliSet, "-o", p("file/x/set.lock")},
		{"unpack", "coredns:1", "-o", p("file/x/tree")},
		{"mirror", "-f", cliSet, "--to", "oci-archive:" + p("file/x/set.tar"), "-o", p("mirror2/set.yaml")},
		// Every output is checked before the first is written.
		{"mirror", "-f", cliSet, "--to", "oci-archive:" + p("mirror3/set.tar"), "-o", p("file/x/set.yaml")},
	} {
		r := cliRun(t, args...)
		line := strings.TrimSpace(r.stderr)
		if r.code == 0 || strings.Count(line, "\n") != 0 || !strings.Contains(line, p("file/x")) || !strings.Contains(line, "not a directory") {
			t.Errorf("addonpkg %s: exit %d, stderr %q: want one line naming the output and why", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if b, err := os.ReadFile(p("file")); err != nil || string(b) != "x" {
		t.Errorf("the file in the way was changed: %q %v", b, err)
	}
	if _, err := os.Stat(p("mirror2/set.yaml")); err == nil {
		t.Error("a failed mirror wrote its declaration")
	}
	if _, err := os.Stat(p("mirror3")); err == nil {
		t.Error("a mirror whose declaration cannot be written wrote its archive")
	}
}

// TestOutputFileThatIsAFolder: an output file (an archive, a lock file)
// named by a folder that exists is refused in one line saying so, before
// any work, and nothing is left in the folder. (copy to oci-archive:/
// said "createtemp /.tmp-*: pattern contains path separator", and to
// oci-archive:DIR "rename DIR.tmp-123 DIR: file exists", after writing
// the whole archive.)
func TestOutputFileThatIsAFolder(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	dir := t.TempDir()
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	for _, c := range []struct {
		args []string
		path string
	}{
		{[]string{"copy", "coredns:1", "oci-archive:" + dir}, dir},
		{[]string{"copy", "coredns:1", "docker-archive:" + dir}, dir},
		{[]string{"build", cliExampleDir("coredns"), "-t", "coredns:2", "--output", "oci-archive:" + dir}, dir},
		{[]string{"lock", "-f", cliSet, "-o", dir}, dir},
		{[]string{"mirror", "-f", cliSet, "--to", "oci-archive:" + dir, "-o", filepath.Join(t.TempDir(), "set.yaml")}, dir},
		{[]string{"copy", "coredns:1", "oci-archive:/"}, "/"},
	} {
		r := cliRun(t, c.args...)
		line := strings.TrimSpace(r.stderr)
		if r.code == 0 || strings.Count(line, "\n") != 0 || !strings.Contains(line, c.path+": is a directory") {
			t.Errorf("addonpkg %s: exit %d, stderr %q: want one line saying %s is a directory", strings.Join(c.args, " "), r.code, r.stderr, c.path)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the folder in the way holds %v (%v)", entries, err)
	}
}

// Every --json says what it prints, once: six said "print the result as
// JSON", push said more than pull and copy of the same result, and
// render's read "... as JSON instead of the stream as JSON".
func TestJSONHelpSaysWhat(t *testing.T) {
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	seen := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
			f := sub.Flags().Lookup("json")
			if f == nil {
				continue
			}
			if strings.Contains(f.Usage, "the result") || strings.Count(f.Usage, "JSON") != 1 {
				t.Errorf("%s --json: %q: say what it prints, and JSON once", sub.CommandPath(), f.Usage)
			}
			seen[sub.Name()] = f.Usage
		}
	}
	walk(root)
	if seen["push"] != seen["pull"] || seen["pull"] != seen["copy"] {
		t.Errorf("push, pull and copy print one result; their --json help differs:\n%q\n%q\n%q", seen["push"], seen["pull"], seen["copy"])
	}
}
