package peers

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/oci"

	"github.com/addonpkg/addonpkg/internal/testing/addonpkgbin"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

var (
	repoRoot    string // the addonpkg module root
	addonpkgBin string // addonpkgbin.Path: make test's, or built by TestMain
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = root
	tmp, err := os.MkdirTemp("", "addonpkg-flux-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if addonpkgBin, err = addonpkgbin.Path(repoRoot, tmp); err != nil {
		fmt.Fprintf(os.Stderr, "flux e2e: %v\n", err)
		return 1
	}
	return m.Run()
}

// addonpkg runs the binary with a private store and fails the test on error.
func addonpkg(t *testing.T, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(addonpkgBin, args...)
	cmd.Env = append(os.Environ(), "ADDONPKG_HOME="+home, "DOCKER_CONFIG="+home, "SOURCE_DATE_EPOCH=1700000000", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("addonpkg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// readTree maps the slash paths under dir to the file contents, "<dir>"
// for directories.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out[rel] = "<dir>"
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		default:
			out[rel] = "<" + d.Type().String() + ">"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(got, want map[string]string) string {
	var b strings.Builder
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			fmt.Fprintf(&b, "  missing: %s\n", k)
		case g != v:
			fmt.Fprintf(&b, "  differs: %s\n", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  extra:   %s\n", k)
		}
	}
	return b.String()
}

// TestFluxPullsWhatBuildMakes: Flux's client pulls every kind of add-on
// that addonpkg builds by default (both forms of every example, and a
// patched artifact) and gets the add-on tree: at the root for the
// artifact form, under addon/ (Flux's `path: ./addon`) for the image form.
func TestFluxPullsWhatBuildMakes(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.Plain})
	home := t.TempDir()
	client := oci.NewClient(oci.DefaultOptions())
	ctx := context.Background()

	type tc struct {
		name, ref, subdir string
		want              map[string]string
	}
	var cases []tc
	for _, ex := range []string{"coredns", "metrics-server", "gateway-api-crds"} {
		dir := filepath.Join(repoRoot, "examples", ex)
		want := readTree(t, dir)
		for _, form := range []string{"artifact", "image"} {
			tag := ex + "-" + form + ":1"
			addonpkg(t, home, "build", dir, "--format", form, "-t", tag)
			ref := reg.Host + "/addons/" + ex + "-" + form + ":1"
			addonpkg(t, home, "push", tag, ref)
			sub := ""
			if form == "image" {
				sub = "addon"
			}
			cases = append(cases, tc{ex + "/" + form, ref, sub, want})
		}
	}

	// A patch of an artifact, as build --base makes it by default.
	patch := t.TempDir()
	if err := os.WriteFile(filepath.Join(patch, "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: kube-system\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addonpkg(t, home, "build", patch, "--base", "coredns-artifact:1", "-t", "coredns-patched:1")
	pref := reg.Host + "/addons/coredns-patched:1"
	addonpkg(t, home, "push", "coredns-patched:1", pref)
	unpacked := filepath.Join(t.TempDir(), "patched")
	addonpkg(t, home, "unpack", pref, "-o", unpacked)
	pwant := readTree(t, unpacked)
	if pwant["extra.yaml"] == "" {
		t.Fatalf("addonpkg unpack of the patched artifact lacks the patch: %v", pwant)
	}
	cases = append(cases, tc{"coredns/patched-artifact", pref, "", pwant})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if _, err := client.Pull(ctx, c.ref, out); err != nil {
				t.Fatalf("flux client Pull %s: %v", c.ref, err)
			}
			if d := diffTrees(readTree(t, filepath.Join(out, c.subdir)), c.want); d != "" {
				t.Errorf("Flux's client pulled %s into a tree unlike the add-on's (path ./%s):\n%s", c.ref, c.subdir, d)
			}
		})
	}
}
