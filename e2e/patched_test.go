package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// patchedArtifact builds the metrics-server example as an artifact, then
// a patch of it (a file changed, a file added, a file deleted) with extra
// build flags, pushes the patch to r and returns its reference and the
// tree addonpkg unpacks from it.
func patchedArtifact(t *testing.T, c *cli, r *testregistry.Registry, repo string, flags ...string) (string, tree) {
	t.Helper()
	dir := example(t, "metrics-server")
	c.build(dir, "--format", "artifact", "-t", "ms-base:1")
	patch := writeTree(t, t.TempDir(), map[string]string{
		"base/extra.yaml": configMap("extra"),
		"README.patch":    "patched\n",
	})
	args := append([]string{"--base", "ms-base:1", "-t", "ms-patched:1", "--delete", "overlays/test-ha"}, flags...)
	c.build(patch, args...)
	ref := r.Host + "/" + repo + ":1"
	c.ok("push", "ms-patched:1", ref)
	out := filepath.Join(t.TempDir(), "want")
	c.ok("unpack", ref, "-o", out)
	want := readTree(t, out)
	if want["base/extra.yaml"] == "" || want["overlays/test-ha"] != "" {
		t.Fatalf("addonpkg unpack of the patch does not show it: %v", want)
	}
	return ref, want
}

// TestOrasPullPatchedArtifact: oras pull of a patched artifact gives the
// patched tree (build --base squashes an artifact into one layer), and
// never a wrong tree: with --layered, oras refuses the layers titled ".".
func TestOrasPullPatchedArtifact(t *testing.T) {
	oras := needTool(t, "oras")
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)

	ref, want := patchedArtifact(t, c, r, "addons/ms-patched")
	var in inspectOutput
	c.okJSON(&in, "inspect", ref, "--json")
	if len(in.Layers) != 1 {
		t.Errorf("a patched artifact has %d layers, want 1", len(in.Layers))
	}
	work := t.TempDir()
	newCLI(t).tool(work, oras, "pull", "--plain-http", ref, "-o", "out")
	assertTree(t, "oras pull "+ref, readTree(t, filepath.Join(work, "out")), want, "addonpkg unpack -o")

	// --layered keeps the layers: oras must not produce a wrong tree.
	cl := newCLI(t)
	lref, lwant := patchedArtifact(t, cl, r, "addons/ms-layered", "--layered")
	lwork := t.TempDir()
	res := cl.exec(lwork, "", oras, "pull", "--plain-http", lref, "-o", "out")
	if res.code == 0 {
		assertTree(t, "oras pull "+lref, readTree(t, filepath.Join(lwork, "out")), lwant, "addonpkg unpack -o")
	} else if !strings.Contains(res.stderr, "duplicate") {
		t.Logf("oras pull of a layered artifact failed (as it should rather than give a wrong tree):\n%s", res)
	}
}

// TestBuildWarnsWhatFluxCannotRead: build says when a choice makes an
// artifact Flux cannot read, and says nothing for the defaults.
func TestBuildWarnsWhatFluxCannotRead(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := smallAddon(t, "small")
	for _, tc := range []struct {
		args []string
		want string // "" = no warning
	}{
		{[]string{"--format", "artifact", "-t", "a:1"}, ""},
		{[]string{"--format", "image", "-t", "i:1"}, ""},
		{[]string{"--format", "artifact", "--compression", "zstd", "-t", "z:1"}, "Flux reads only gzip layers"},
		{[]string{"--format", "artifact", "--compression", "none", "-t", "n:1"}, "Flux reads only gzip layers"},
		{[]string{"--base", "a:1", "--layered", "-t", "l:1"}, "reads only the first"},
		{[]string{"--base", "a:1", "-t", "p:1"}, ""},
	} {
		r := c.run(append([]string{"build", dir}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("build failed:\n%s", r)
		}
		switch {
		case tc.want == "" && r.stderr != "":
			t.Errorf("build %v: stderr %q, want nothing", tc.args, r.stderr)
		case tc.want != "" && (!strings.Contains(r.stderr, "warning: ") || !strings.Contains(r.stderr, tc.want)):
			t.Errorf("build %v: stderr %q, want a warning saying %q", tc.args, r.stderr, tc.want)
		}
	}
}
