package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addonpkg/addonpkg/internal/testing/kubeenv"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/render"
)

// These tests run the CLI in-process, each with its own store
// (cliNewHome), and most run in parallel: see cliExec for the state they
// must not share.

var (
	cliExamples = []string{"coredns", "metrics-server", "gateway-api-crds"}
	cliForms    = []string{"image", "artifact"}
)

func cliExampleDir(name string) string { return filepath.Join("..", "..", "examples", name) }

type cliOutcome struct {
	code           int
	stdout, stderr string
}

func cliRun(t *testing.T, args ...string) cliOutcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cliExec(t, args, strings.NewReader(""), &stdout, &stderr)
	return cliOutcome{code, stdout.String(), stderr.String()}
}

// cliExec runs the CLI in process, as run does, with the store of t or
// of its nearest parent test that called cliNewHome, given as the
// --store default rather than through ADDONPKG_HOME: the environment is
// the process's, and a test that sets it (t.Setenv) cannot run in
// parallel. What else is the process's, and keeps a test that touches it
// serial: the environment (DOCKER_CONFIG for logins, KUBECONFIG, TERM,
// NETRC), the working directory (t.Chdir), klog's destination (-v sets
// it for every command in the process) and the process's memory (the
// peak-RSS tests measure a child instead, and run without -race).
func cliExec(t *testing.T, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	t.Helper()
	root, a := newRoot(stdin, stdout, stderr)
	a.storeDir = cliHomeOf(t)
	return execute(context.Background(), root, a, args)
}

// cliHomes maps a test's name to the store cliNewHome made for it.
// Names are unique among the tests that run at once.
var cliHomes sync.Map

// cliHomeOf is the store of t or of its nearest parent that has one; ""
// (the default store) if none has.
func cliHomeOf(t *testing.T) string {
	for name := t.Name(); ; {
		if dir, ok := cliHomes.Load(name); ok {
			return dir.(string)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return ""
		}
		name = name[:i]
	}
}

// cliMust runs the CLI and fails the test unless it exits 0.
func cliMust(t *testing.T, args ...string) string {
	t.Helper()
	r := cliRun(t, args...)
	if r.code != 0 {
		t.Fatalf("addonpkg %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// cliNewHome gives t and its subtests a fresh store directory (not yet
// created), which cliExec passes to the commands they run.
// SOURCE_DATE_EPOCH, which would change what build writes, is cleared
// once for the whole package by TestMain.
func cliNewHome(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	cliHomes.Store(t.Name(), dir)
	t.Cleanup(func() { cliHomes.Delete(t.Name()) })
	return dir
}

// The tests run in parallel, each on its own store: what a test's
// commands write lands in its cliNewHome, a subtest's commands use its
// parent's, and a subtest that makes its own store sees only that one.
// (Commands that fell back to ADDONPKG_HOME would share one store.)
func TestCLIStoreIsTheTests(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	if _, err := os.Stat(filepath.Join(home, "index.json")); err != nil {
		t.Fatalf("build did not write the test's store: %v", err)
	}
	t.Run("parent's", func(t *testing.T) {
		if rows := cliImagesJSON(t); len(rows) != 1 || rows[0].Name != "coredns:1" {
			t.Errorf("images in a subtest = %v, want the parent's coredns:1", rows)
		}
	})
	t.Run("own", func(t *testing.T) {
		own := cliNewHome(t)
		cliMust(t, "tag", "coredns:1", "mine:1", "--store", home)
		if rows := cliImagesJSON(t); len(rows) != 0 {
			t.Errorf("images in a subtest with a store of its own = %v, want none", rows)
		}
		if _, err := os.Stat(own); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the subtest's store was written: %v", err)
		}
	})
	if rows := cliImagesJSON(t); len(rows) != 2 {
		t.Errorf("images = %v, want coredns:1 and mine:1", rows)
	}
}

var cliDigestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`)

type cliImageRow struct {
	Name      string `json:"name"`
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType"`
	Form      string `json:"form"`
}

func cliImagesJSON(t *testing.T) []cliImageRow {
	t.Helper()
	var rows []cliImageRow
	out := cliMust(t, "images", "--json")
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("images --json: %v\n%s", err, out)
	}
	return rows
}

// cliEntry is what a tree comparison looks at: type, bytes and the execute
// bit (the only permission an add-on keeps, spec/addon-v1.md section 7.2).
type cliEntry struct {
	dir  bool
	exec bool
	data string
}

func cliReadTree(t *testing.T, root string) map[string]cliEntry {
	t.Helper()
	out := map[string]cliEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out[rel] = cliEntry{dir: true}
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[rel] = cliEntry{exec: info.Mode().Perm()&0o111 != 0, data: string(b)}
		default:
			t.Errorf("%s: unexpected type %v", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cliSameTree(t *testing.T, want, got string) {
	t.Helper()
	w, g := cliReadTree(t, want), cliReadTree(t, got)
	for p, we := range w {
		ge, ok := g[p]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", got, p)
		case ge.dir != we.dir:
			t.Errorf("%s: %s is a directory in one tree only", got, p)
		case ge.data != we.data:
			t.Errorf("%s: %s differs from %s", got, p, filepath.Join(want, p))
		case ge.exec != we.exec:
			t.Errorf("%s: %s execute bit %v, want %v", got, p, ge.exec, we.exec)
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: unexpected %s", got, p)
		}
	}
	if len(w) == 0 {
		t.Errorf("%s is empty", want)
	}
}

// cliStoreState is what must not change when a command fails: index.json
// and every file of the store.
func cliStoreState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	idx, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	b.Write(idx)
	b.WriteString("\n")
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func cliBlobNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// cliCheckError checks a failure: exit 1 and one stderr line that
// contains each of wants.
func cliCheckError(t *testing.T, r cliOutcome, wants ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (stderr %q)", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "addonpkg: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("stderr is not one 'addonpkg: ...' line: %q", r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not contain %q", r.stderr, w)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}

func TestCLIBuildThenImages(t *testing.T) {
	t.Parallel()
	for _, ex := range cliExamples {
		for _, form := range cliForms {
			t.Run(ex+"/"+form, func(t *testing.T) {
				cliNewHome(t)
				tag := ex + ":1.11"
				out := cliMust(t, "build", cliExampleDir(ex), "-t", tag, "--format", form)
				if !cliDigestRE.MatchString(out) {
					t.Fatalf("build printed %q, want a digest line", out)
				}
				digest := strings.TrimSpace(out)

				table := cliMust(t, "images")
				lines := strings.Split(strings.TrimSpace(table), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") {
					t.Fatalf("images:\n%s", table)
				}
				if f := strings.Fields(lines[1]); len(f) != 3 || f[0] != tag || f[1] != digest || f[2] != form {
					t.Errorf("images row %q, want %s %s %s", lines[1], tag, digest, form)
				}
				rows := cliImagesJSON(t)
				want := cliImageRow{Name: tag, Digest: digest, MediaType: "application/vnd.oci.image.manifest.v1+json", Form: form}
				if len(rows) != 1 || rows[0] != want {
					t.Errorf("images --json: %+v, want [%+v]", rows, want)
				}
				// The same build again gives the same digest.
				if again := cliMust(t, "build", cliExampleDir(ex), "-t", tag, "--format", form); again != out {
					t.Errorf("second build: %q, first %q", again, out)
				}
				if n := len(cliImagesJSON(t)); n != 1 {
					t.Errorf("%d entries after building the same tag twice", n)
				}
			})
		}
	}
}

func TestCLIBuildJSON(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	out := cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1", "--json")
	var v struct {
		Digest string   `json:"digest"`
		Tags   []string `json:"tags"`
		Format string   `json:"format"`
		Config struct {
			Name      string `json:"name"`
			Kind      string `json:"kind"`
			Inventory struct {
				Objects []any    `json:"objects"`
				Images  []string `json:"images"`
			} `json:"inventory"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !cliDigestRE.MatchString(v.Digest+"\n") || !slices.Equal(v.Tags, []string{"coredns:1"}) || v.Format != "image" ||
		v.Config.Name != "coredns" || v.Config.Kind != "manifests" || len(v.Config.Inventory.Objects) != 6 {
		t.Errorf("build --json: %s", out)
	}
}

func TestCLITagRmGC(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	digest := strings.TrimSpace(cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11"))
	if out := strings.TrimSpace(cliMust(t, "tag", "coredns:1.11", "registry.example.com/addons/coredns:1.11")); out != digest {
		t.Errorf("tag printed %q, want %s", out, digest)
	}
	cliMust(t, "tag", "coredns:1.11", "other") // gets :latest
	var names []string
	for _, r := range cliImagesJSON(t) {
		names = append(names, r.Name)
		if r.Digest != digest {
			t.Errorf("%s: digest %s, want %s", r.Name, r.Digest, digest)
		}
	}
	if want := []string{"coredns:1.11", "other:latest", "registry.example.com/addons/coredns:1.11"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	cliCheckError(t, cliRun(t, "tag", "nosuch:1", "x:1"), "nosuch:1", "not in the local store")

	before := cliBlobNames(t, home)
	if len(before) != 3 {
		t.Errorf("%d blobs, want 3 (manifest, config, layer)", len(before))
	}
	cliMust(t, "rm", "coredns:1.11", "other")
	cliCheckError(t, cliRun(t, "rm", "coredns:1.11"), "coredns:1.11", "not in the local store")
	// One name still uses the blobs: gc keeps them.
	r := cliRun(t, "gc")
	if r.code != 0 || !strings.Contains(r.stderr, "removed 0 files") {
		t.Errorf("gc with a name left: exit %d, %q", r.code, r.stderr)
	}
	if got := cliBlobNames(t, home); !slices.Equal(got, before) {
		t.Errorf("gc removed blobs still in use: %q, had %q", got, before)
	}
	cliMust(t, "rm", "registry.example.com/addons/coredns:1.11")
	out := cliMust(t, "gc", "--json")
	var gc struct {
		Removed    int   `json:"removed"`
		FreedBytes int64 `json:"freedBytes"`
	}
	if err := json.Unmarshal([]byte(out), &gc); err != nil {
		t.Fatalf("gc --json: %v\n%s", err, out)
	}
	if gc.Removed != 3 || gc.FreedBytes <= 0 {
		t.Errorf("gc --json: %s, want 3 files removed", out)
	}
	if got := cliBlobNames(t, home); len(got) != 0 {
		t.Errorf("blobs left after rm and gc: %q", got)
	}
	// The store still opens and its index is valid JSON.
	b, err := os.ReadFile(filepath.Join(home, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		SchemaVersion int               `json:"schemaVersion"`
		Manifests     []json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(b, &idx); err != nil || idx.SchemaVersion != 2 || len(idx.Manifests) != 0 {
		t.Errorf("index.json after gc: %s (%v)", b, err)
	}
	if _, err := layout.Open(home); err != nil {
		t.Error(err)
	}
	if rows := cliImagesJSON(t); len(rows) != 0 {
		t.Errorf("images after rm: %+v", rows)
	}
	// And takes new add-ons.
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11")
	cliMust(t, "unpack", "coredns:1.11", "-o", filepath.Join(t.TempDir(), "out"))
}

func TestCLIBuildOutputsThenUnpack(t *testing.T) {
	t.Parallel()
	for _, ex := range []string{"coredns", "metrics-server"} {
		t.Run(ex, func(t *testing.T) {
			home := cliNewHome(t)
			dir := t.TempDir()
			layoutDir := filepath.Join(dir, "layout")
			archive := filepath.Join(dir, "addon.tar")
			docker := filepath.Join(dir, "docker.tar")
			cliMust(t, "build", cliExampleDir(ex),
				"--output", "oci:"+layoutDir+":t",
				"--output", "oci-archive:"+archive,
				"--output", "docker-archive:"+docker)
			if _, err := os.Stat(home); err == nil {
				t.Errorf("build with only --output wrote to the store %s", home)
			}
			for i, src := range []string{"oci:" + layoutDir + ":t", "oci-archive:" + archive, "docker-archive:" + docker} {
				out := filepath.Join(dir, "out", string(rune('a'+i)))
				cliMust(t, "unpack", src, "-o", out)
				cliSameTree(t, cliExampleDir(ex), out)
			}
			// No temp files beside the outputs.
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			// The artifact form goes to layouts and archives, not docker.
			cliMust(t, "build", cliExampleDir(ex), "--format", "artifact", "--output", "oci:"+layoutDir+":a", "--output", "oci-archive:"+archive+"2")
			for i, src := range []string{"oci:" + layoutDir + ":a", "oci-archive:" + archive + "2"} {
				out := filepath.Join(dir, "out-artifact", string(rune('a'+i)))
				cliMust(t, "unpack", src, "-o", out)
				cliSameTree(t, cliExampleDir(ex), out)
			}
			cliCheckError(t, cliRun(t, "build", cliExampleDir(ex), "--format", "artifact", "--output", "docker-archive:"+docker+"2"), "docker-archive", "image form")
			if _, err := os.Stat(docker + "2"); err == nil {
				t.Error("a refused docker-archive output was written")
			}
		})
	}
}

// Every example, in both forms, unpacks to exactly its source tree.
func TestCLIBuildUnpackRoundTrip(t *testing.T) {
	t.Parallel()
	for _, ex := range cliExamples {
		for _, form := range cliForms {
			t.Run(ex+"/"+form, func(t *testing.T) {
				cliNewHome(t)
				cliMust(t, "build", cliExampleDir(ex), "-t", "x:1", "--format", form)
				out := filepath.Join(t.TempDir(), "out")
				cliMust(t, "unpack", "x:1", "-o", out)
				cliSameTree(t, cliExampleDir(ex), out)

				args := []string{"unpack", "x:1"}
				if ex == "coredns" {
					args = append(args, "--set", "DNS_SERVER_IP=10.0.0.10")
				}
				stdout := cliMust(t, args...)
				docs, err := render.SplitDocuments("stdout", []byte(stdout))
				if err != nil {
					t.Fatalf("unpack x:1 printed YAML that does not split: %v", err)
				}
				switch ex {
				case "coredns":
					src, err := os.ReadFile(filepath.Join(cliExampleDir(ex), "coredns.yaml"))
					if err != nil {
						t.Fatal(err)
					}
					// Its values: the one given, and the defaults of its
					// .addonvalues.
					src = []byte(strings.NewReplacer("${DNS_SERVER_IP}", "10.0.0.10", "${DNS_DOMAIN}", "cluster.local", "${DNS_MEMORY_LIMIT}", "170Mi").Replace(string(src)))
					want, err := render.SplitDocuments("coredns.yaml", src)
					if err != nil {
						t.Fatal(err)
					}
					// The stream is the file's documents in apply order.
					render.SortForApply(want)
					if len(docs) != len(want) {
						t.Fatalf("%d documents, want %d", len(docs), len(want))
					}
					for i := range want {
						if !bytes.Equal(docs[i].Raw, want[i].Raw) {
							t.Errorf("document %d:\n%s\nwant:\n%s", i, docs[i].Raw, want[i].Raw)
						}
					}
				case "metrics-server":
					if len(docs) != 9 {
						t.Errorf("%d objects, want 9", len(docs))
					}
				case "gateway-api-crds":
					if len(docs) != 3 {
						t.Errorf("%d objects, want 3", len(docs))
					}
				}
			})
		}
	}
}

// cliCopyExample copies an example into a fresh writable directory.
func cliCopyExample(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	src := cliExampleDir(name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func cliWriteFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad inputs fail with one line that names the input and the problem, and
// leave the store as it was.
func TestCLIBuildBadInputs(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) []string // returns the build arguments
		want  []string
		re    string
	}{
		{"yaml syntax error", func(t *testing.T) []string {
			dir := t.TempDir()
			cliWriteFile(t, filepath.Join(dir, "sub", "bad.yaml"), cm+"---\na: [1, 2\n")
			return []string{dir}
		}, []string{"bad.yaml"}, `bad\.yaml:6: `},
		{"document without kind", func(t *testing.T) []string {
			dir := t.TempDir()
			cliWriteFile(t, filepath.Join(dir, "nokind.yaml"), "apiVersion: v1\nmetadata:\n  name: x\n")
			return []string{dir}
		}, []string{"nokind.yaml:1", "no kind"}, ""},
		{"kustomization names a missing file", func(t *testing.T) []string {
			dir := t.TempDir()
			cliWriteFile(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n- cm.yaml\n- missing.yaml\n")
			cliWriteFile(t, filepath.Join(dir, "cm.yaml"), cm)
			return []string{dir}
		}, []string{"kustomization.yaml:3", "missing.yaml", "not found"}, ""},
		{"symlink out of the tree", func(t *testing.T) []string {
			dir := cliCopyExample(t, "coredns")
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.yaml")); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}, []string{"passwd.yaml", "/etc/passwd", "out of the add-on tree"}, ""},
		{"empty directory", func(t *testing.T) []string {
			return []string{filepath.Join(t.TempDir())}
		}, []string{"no files to package"}, ""},
		{"path does not exist", func(t *testing.T) []string {
			return []string{filepath.Join(t.TempDir(), "nosuch")}
		}, []string{"nosuch", "no such file or directory"}, ""},
		{"bad tag", func(t *testing.T) []string {
			return []string{cliExampleDir("coredns"), "-t", "UPPER:x"}
		}, []string{`"UPPER:x"`, "tag"}, ""},
		{"bad output", func(t *testing.T) []string {
			return []string{cliExampleDir("coredns"), "--output", "ftp:x"}
		}, []string{"--output", "ftp:x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.setup(t)
			before := cliStoreState(t, home)
			beforeBlobs := cliBlobNames(t, home)
			r := cliRun(t, append(append([]string{"build"}, args...), "-t", "bad:1")...)
			want := tc.want
			if tc.name == "empty directory" || tc.name == "path does not exist" {
				want = append(want, args[0])
			}
			if tc.name == "bad output" {
				// -o is checked as the flag is parsed (8d0a0cc): a
				// bad value is a usage error, with the usage line.
				cliCheckUsageError(t, r, want...)
			} else {
				cliCheckError(t, r, want...)
			}
			if tc.re != "" && !regexp.MustCompile(tc.re).MatchString(r.stderr) {
				t.Errorf("stderr %q does not match %s", r.stderr, tc.re)
			}
			if after := cliStoreState(t, home); after != before {
				t.Errorf("the store changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if after := cliBlobNames(t, home); !slices.Equal(after, beforeBlobs) {
				t.Errorf("blobs changed: %q, were %q", after, beforeBlobs)
			}
		})
	}
}

func TestCLIUnwritableStore(t *testing.T) {
	for _, tc := range []struct{ name, sub string }{
		{"home is a file", "file"},
		{"home is below a file", "file/store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "file")
			if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(dir, filepath.FromSlash(tc.sub))
			t.Setenv("ADDONPKG_HOME", home)
			r := cliRun(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
			cliCheckError(t, r, home, "not a directory")
			if b, err := os.ReadFile(file); err != nil || string(b) != "x" {
				t.Errorf("the file in the way changed: %q, %v", b, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%d entries in %s, want only the file", len(entries), dir)
			}
		})
	}
}

// Commands that only read the store, and completion, do not create it:
// a store that is not there yet lists empty, and a mistyped --store is
// not left behind as a new folder. The first write creates it.
func TestCLIReadsCreateNoStore(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	typo := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{
		{"images"},
		{"images", "--json"},
		{"images", "--store", typo},
		{"gc"},
		{"__complete", "rm", ""},
		{"__complete", "unpack", ""},
	} {
		cliMust(t, args...)
	}
	for _, args := range [][]string{
		{"rm", "coredns:1"},
		{"unpack", "coredns:1", "-o", filepath.Join(t.TempDir(), "out")},
		{"inspect", "--store", typo, "coredns:1"},
	} {
		if r := cliRun(t, args...); r.code == 0 {
			t.Errorf("addonpkg %s: exit 0 on an empty store", strings.Join(args, " "))
		}
	}
	for _, dir := range []string{home, typo} {
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a read created %s: %v", dir, err)
		}
	}
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	if rows := cliImagesJSON(t); len(rows) != 1 {
		t.Errorf("after the first build: %d rows, want 1", len(rows))
	}
}

func TestCLIUnpackErrors(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "x:1")
	before := cliStoreState(t, home)

	cliCheckError(t, cliRun(t, "unpack", "nosuch:1", "--pull", "never"), "nosuch:1", "not in the local store")

	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	cliWriteFile(t, filepath.Join(dir, "keep.txt"), "mine")
	cliCheckError(t, cliRun(t, "unpack", "x:1", "-o", dir), dir, "not empty")
	if got := cliReadTree(t, dir); len(got) != 1 || got["keep.txt"].data != "mine" {
		t.Errorf("the non-empty output directory changed: %+v", got)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the output directory: %q", names)
	}
	// An empty directory is fine.
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cliMust(t, "unpack", "x:1", "-o", empty)
	cliSameTree(t, cliExampleDir("coredns"), empty)

	if after := cliStoreState(t, home); after != before {
		t.Errorf("the store changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestCLICompletion(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out := cliMust(t, "completion", shell)
		if !strings.Contains(out, "addonpkg") {
			t.Errorf("completion %s printed %d bytes without the command name", shell, len(out))
		}
	}
	// Dynamic completion of store names.
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	out := cliMust(t, "__complete", "unpack", "")
	if !strings.Contains(out, "coredns:1") {
		t.Errorf("completing unpack: %q", out)
	}
	out = cliMust(t, "__complete", "build", ".", "--format", "")
	if !strings.Contains(out, "image") || !strings.Contains(out, "artifact") {
		t.Errorf("completing --format: %q", out)
	}
}

// Store names are offered only where a command takes one, and a name
// already given is not offered again: "unpack coredns:1 <TAB>" offered
// every name for an argument unpack refuses, and "rm a <TAB>" offered a.
func TestCLICompletionStopsAtTheLastName(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	cliMust(t, "tag", "coredns:1", "coredns:2")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"unpack", ""}, []string{"coredns:1", "coredns:2"}},
		{[]string{"unpack", "coredns:1", ""}, nil},
		{[]string{"inspect", "coredns:1", ""}, nil},
		{[]string{"apply", "coredns:1", ""}, nil},
		{[]string{"push", "coredns:1", "127.0.0.1:1/x:1", ""}, nil},
		{[]string{"tag", "coredns:1", "coredns:3", ""}, nil},
		{[]string{"diff", "coredns:1", ""}, []string{"coredns:2"}},
		{[]string{"diff", "coredns:1", "coredns:2", ""}, nil},
		{[]string{"rm", "coredns:1", ""}, []string{"coredns:2"}},
	} {
		out := cliMust(t, append([]string{"__complete"}, c.args...)...)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
				got = append(got, l)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("__complete %q offers %q, want %q", c.args, got, c.want)
		}
	}
}

// A SOURCE may be a folder or a file as well as a store name, so its
// completion leaves the shell's completion of paths on (directive 0:
// "apply ./exa<TAB>" completed nothing), while a command that takes
// store names only (push, tag, rm) offers nothing else (4: no files).
func TestCLICompletionOffersPathsForASource(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "./"}, ":0"},
		{[]string{"unpack", ""}, ":0"},
		{[]string{"inspect", "./"}, ":0"},
		{[]string{"diff", "coredns:1", "./"}, ":0"},
		{[]string{"diff", "coredns:1", "./a", ""}, ":4"},
		{[]string{"push", ""}, ":4"},
		{[]string{"tag", ""}, ":4"},
		{[]string{"rm", ""}, ":4"},
	} {
		out := cliMust(t, append([]string{"__complete"}, c.args...)...)
		var directive string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, ":") {
				directive = l
			}
		}
		if directive != c.want {
			t.Errorf("__complete %q ends with directive %q, want %q", c.args, directive, c.want)
		}
	}
}

// --context completes with the kubeconfig's contexts, as kubectl's,
// helm's and flux's do (it offered the directory's files), from the
// --kubeconfig given before it, else $KUBECONFIG.
func TestCLICompletionOffersContexts(t *testing.T) {
	cliNewHome(t)
	dir := t.TempDir()
	write := func(name string, contexts ...string) string { return kubeenv.WriteContexts(t, dir, name, contexts...) }
	t.Setenv("KUBECONFIG", write("env", "prod", "dev"))
	other := write("other", "kind-dev")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"status", "--context", ""}, []string{"dev", "prod", ":4"}},
		{[]string{"apply", "x", "--context", ""}, []string{"dev", "prod", ":4"}},
		{[]string{"uninstall", "--kubeconfig", other, "--context", ""}, []string{"kind-dev", ":4"}},
		{[]string{"diff", "--cluster", "x", "--kubeconfig", other, "--context", ""}, []string{"kind-dev", ":4"}},
	} {
		out := cliMust(t, append([]string{"__complete"}, c.args...)...)
		if got := strings.Fields(out); !slices.Equal(got, c.want) {
			t.Errorf("__complete %q = %q, want %q", c.args, got, c.want)
		}
	}
}

// A --values file that cannot be read is one line naming the flag, then
// the problem: "--values open ..." ran the flag into the message. (A
// malformed --set is a bad flag value: TestFlagValuesRefusedAsParsed.)
func TestCLIValuesFlagErrors(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--values", missing}, "addonpkg: --values " + missing + ": no such file or directory\n"},
	} {
		r := cliRun(t, append([]string{"unpack", cliExampleDir("coredns")}, c.args...)...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("unpack %q: exit %d, stdout %.80q, stderr %q; want exit 1 and one line starting %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// fullWriter fails every write, as stdout on a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A result that cannot be written to stdout is a failure, whether or not
// the command looked at the error of its print: build's digest, tag's,
// the images table, the version, the help.
func TestCLIStdoutWriteFailure(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	for _, args := range [][]string{
		{"build", cliExampleDir("coredns"), "-t", "coredns:2"},
		{"tag", "coredns:1", "coredns:3"},
		{"images"},
		{"version"},
		{"--help"},
	} {
		var stderr bytes.Buffer
		code := cliExec(t, args, strings.NewReader(""), fullWriter{}, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "no space left on device") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("addonpkg %s with stdout full: exit %d, stderr %q; want 1 and one line naming the failed write", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// images lists add-ons: the tags named after a digest (cosign's
// sha256-HEX.sig, .att, .sbom, pulled with an add-on) only with --all;
// and no suggestion offers them.
func TestCLIImagesHidesAttachmentTags(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1.11")
	sig := "coredns:sha256-" + strings.Repeat("a", 64) + ".sig"
	cliMust(t, "tag", "coredns:1.11", sig)
	if rows := cliImagesJSON(t); len(rows) != 1 || rows[0].Name != "coredns:1.11" {
		t.Errorf("images: %+v, want coredns:1.11 alone", rows)
	}
	if out := cliMust(t, "images", "--all"); !strings.Contains(out, sig) {
		t.Errorf("images --all does not list %s:\n%s", sig, out)
	}
	r := cliRun(t, "unpack", "coredns:1.1")
	if !strings.Contains(r.stderr, "did you mean coredns:1.11?") || strings.Contains(r.stderr, ".sig") {
		t.Errorf("the suggestion: %q, want coredns:1.11 and no signature tag", r.stderr)
	}
}

// Building an overlay whose base sits beside it is refused with the way
// to build it: render it first and build the stream.
func TestCLIBuildOverlayHint(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	r := cliRun(t, "build", filepath.Join(cliExampleDir("metrics-server"), "overlays", "release-ha"))
	if r.code != 1 || !strings.Contains(r.stderr, `path outside the add-on root: resources "../../base"`) || !strings.Contains(r.stderr, "kustomize build DIR | addonpkg build -") {
		t.Errorf("build of an overlay: exit %d, stderr %q", r.code, r.stderr)
	}
}

// inspect of a folder shows the metadata and inventory its content
// gives, and no digest or layers, which only an image has.
func TestInspectFolder(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	out := cliMust(t, "inspect", "../../examples/coredns")
	for _, want := range []string{"Form:", "folder", "Name:", "coredns", "Identity:", "sha256:", "Objects:", "Deployment"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect of a folder lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"Digest:", "Layers:"} {
		if strings.Contains(out, not) {
			t.Errorf("inspect of a folder shows %q:\n%s", not, out)
		}
	}
}

// A flag completes paths only when its value is one (pathFlags): the
// shell offered the working directory's files for --name, -t, --set,
// --timeout and every other value without a completion of its own.
func TestFlagCompletionOffersPathsOnlyForPaths(t *testing.T) {
	cliNewHome(t)
	root, _ := newRoot(nil, &bytes.Buffer{}, &bytes.Buffer{})
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
			if !sub.Runnable() || sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				if f.Name == "help" {
					return
				}
				n++
				path := strings.Fields(sub.CommandPath())[1:]
				out := cliMust(t, append(append([]string{"__complete"}, path...), "--"+f.Name+"=")...)
				lines := strings.Split(strings.TrimSpace(out), "\n")
				files := lines[len(lines)-1] == ":0"
				if want := slices.Contains(pathFlags, f.Name); files != want {
					t.Errorf("%s --%s: completes files %v, want %v (%q)", sub.CommandPath(), f.Name, files, want, lines[len(lines)-1])
				}
			})
		}
	}
	walk(root)
	if n < 100 {
		t.Errorf("checked %d flags; the walk missed the commands", n)
	}
}
