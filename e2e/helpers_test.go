package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/internal/testing/addonpkgbin"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// Media types the tests write or expect, spelled out rather than imported
// so that a change in pkg/mediatypes cannot silently change the tests.
const (
	mtOCIManifest   = "application/vnd.oci.image.manifest.v1+json"
	mtAddonConfig   = "application/vnd.cncf.addon.config.v1+json"
	mtAddonContent  = "application/vnd.cncf.addon.content.v1.tar+gzip"
	mtFluxConfig    = "application/vnd.cncf.flux.config.v1+json"
	mtFluxContent   = "application/vnd.cncf.flux.content.v1.tar+gzip"
	installHint     = "run hack/install-deps.sh"
	commandTimeout  = 2 * time.Minute
	sourceDateEpoch = "1700000000"
)

var (
	// repoRoot is the module root (the directory of go.mod).
	repoRoot string
	// addonpkgBin is the binary under test (addonpkgbin.Path): make
	// test's, or one TestMain built.
	addonpkgBin string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go env GOMOD: %v\n", err)
		return 1
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		fmt.Fprintln(os.Stderr, "e2e: not inside the addonpkg module (go env GOMOD is empty)")
		return 1
	}
	repoRoot = filepath.Dir(gomod)

	tmp, err := os.MkdirTemp("", "addonpkg-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// make test's prebuilt binary, a release candidate, or one built here.
	if addonpkgBin, err = addonpkgbin.Path(repoRoot, tmp); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	return m.Run()
}

// ---------------------------------------------------------------------------
// Running commands

// cli runs addonpkg (and peer tools) with a private store and docker config.
type cli struct {
	t            *testing.T
	home         string // ADDONPKG_HOME
	dockerConfig string // DOCKER_CONFIG
}

// newCLI gives the test a fresh, empty store and docker config.
func newCLI(t *testing.T) *cli {
	t.Helper()
	return &cli{t: t, home: t.TempDir(), dockerConfig: t.TempDir()}
}

// on returns a copy of c that reports to t (a subtest), sharing the store
// and docker config.
func (c *cli) on(t *testing.T) *cli {
	cc := *c
	cc.t = t
	return &cc
}

// env is the environment of every command: the test's own, without
// anything that could point a command at the user's store, credentials or
// a proxy, plus the per-test directories.
func (c *cli) env() []string {
	drop := map[string]bool{
		"ADDONPKG_HOME": true, "DOCKER_CONFIG": true, "XDG_DATA_HOME": true,
		"SOURCE_DATE_EPOCH": true, "REGISTRY_AUTH_FILE": true,
		"HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true,
		"http_proxy": true, "https_proxy": true, "all_proxy": true, "no_proxy": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env,
		"ADDONPKG_HOME="+c.home,
		"DOCKER_CONFIG="+c.dockerConfig,
		// skopeo reads its credentials from here before the docker config.
		"REGISTRY_AUTH_FILE="+filepath.Join(c.dockerConfig, "config.json"),
		"SOURCE_DATE_EPOCH="+sourceDateEpoch,
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
	)
}

// result is what one command did.
type result struct {
	cmd    string
	stdout string
	stderr string
	code   int
	dur    time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%s\nexit code %d after %v\nstdout:\n%s\nstderr:\n%s", r.cmd, r.code, r.dur.Round(time.Millisecond), r.stdout, r.stderr)
}

// exec runs bin with args in dir ("" for the current directory), feeding
// stdin, and returns what happened. It fails the test only when the
// command cannot be started or hangs.
func (c *cli) exec(dir, stdin, bin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = c.env()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{
		cmd:    filepath.Base(bin) + " " + strings.Join(args, " "),
		stdout: stdout.String(),
		stderr: stderr.String(),
		dur:    time.Since(start),
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.t.Fatalf("%s: timed out after %v\n%s", r.cmd, commandTimeout, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		c.t.Fatalf("%s: %v", r.cmd, err)
	}
	return r
}

// run runs addonpkg.
func (c *cli) run(args ...string) result {
	c.t.Helper()
	return c.exec("", "", addonpkgBin, args...)
}

// runStdin runs addonpkg with stdin.
func (c *cli) runStdin(stdin string, args ...string) result {
	c.t.Helper()
	return c.exec("", stdin, addonpkgBin, args...)
}

// ok runs addonpkg, fails the test unless it exits 0, and returns stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("command failed:\n%s", r)
	}
	return r.stdout
}

// okJSON runs addonpkg (args should include --json) and decodes stdout.
func (c *cli) okJSON(v any, args ...string) {
	c.t.Helper()
	out := c.ok(args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("addonpkg %s: stdout is not the expected JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// tool runs a peer tool in dir and fails the test unless it exits 0.
func (c *cli) tool(dir, bin string, args ...string) result {
	c.t.Helper()
	r := c.exec(dir, "", bin, args...)
	if r.code != 0 {
		c.t.Fatalf("peer tool failed:\n%s", r)
	}
	return r
}

// mustFailOneLine checks that r failed with exit code 1 and exactly one
// line on stderr, and returns that line.
func mustFailOneLine(t *testing.T, r result) string {
	t.Helper()
	if r.code != 1 {
		t.Errorf("want exit code 1, got %d\n%s", r.code, r)
	}
	line := strings.TrimRight(r.stderr, "\n")
	if line == "" || strings.Contains(line, "\n") {
		t.Errorf("want exactly one line on stderr, got %q\n%s", r.stderr, r)
	}
	t.Logf("%s: %s", r.cmd, line)
	return line
}

// ---------------------------------------------------------------------------
// Tools and registries

// needTool finds a peer tool in <repo>/bin, then $PATH. A missing tool
// skips the test locally and fails it under CI.
func needTool(t *testing.T, name string) string {
	t.Helper()
	local := filepath.Join(repoRoot, "bin", name)
	if st, err := os.Stat(local); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return local
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found in %s or $PATH: %s", name, filepath.Join(repoRoot, "bin"), installHint)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startRegistry starts a registry for this test (skipping or failing like
// needTool when docker-registry is missing).
func startRegistry(t *testing.T, mode testregistry.Mode) *testregistry.Registry {
	t.Helper()
	return testregistry.Start(t, testregistry.Options{Mode: mode})
}

// registryManifest fetches a manifest straight from the registry (no
// addonpkg code involved) and returns its bytes and content type.
func registryManifest(t *testing.T, r *testregistry.Registry, repo, ref string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.URL+"/v2/"+repo+"/manifests/"+ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", strings.Join([]string{
		mtOCIManifest,
		"application/vnd.oci.image.index.v1+json",
		"application/vnd.docker.distribution.manifest.v2+json",
		"application/vnd.docker.distribution.manifest.list.v2+json",
	}, ", "))
	if r.Username != "" {
		req.SetBasicAuth(r.Username, r.Password)
	}
	resp, err := (&http.Client{Transport: r.Transport(), Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET manifest %s:%s: %v", repo, ref, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET manifest %s:%s: %s: %s", repo, ref, resp.Status, b)
	}
	return b, resp.Header.Get("Content-Type")
}

func sha256Digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// ---------------------------------------------------------------------------
// Trees

// example copies examples/NAME into a temp dir and returns the copy's
// path (whose base name is NAME, so builds default to that name). Working
// on a copy keeps the tests independent of the git work tree (builds take
// their revision and time from it) and of concurrent edits.
func example(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(repoRoot, "examples", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return fmt.Errorf("%s: unexpected file type %v in an example", p, d.Type())
	})
	if err != nil {
		t.Fatalf("copy example %s: %v", name, err)
	}
	return dst
}

// writeTree creates files (slash paths relative to dir) and returns dir.
func writeTree(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// configMap is a small valid manifest for hand-made trees.
func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\ndata:\n  key: %s\n", name, name)
}

// smallAddon writes a one-ConfigMap add-on named name and returns its dir.
func smallAddon(t *testing.T, name string) string {
	t.Helper()
	return writeTree(t, filepath.Join(t.TempDir(), name), map[string]string{name + ".yaml": configMap(name)})
}

// tree maps the slash paths under a directory to "dir", "-> TARGET" for
// symlinks, or the file's content. File modes are not compared: the
// examples are read-only in the repository, and writers normalise modes.
type tree map[string]string

const dirMark = "<dir>"

// readTree reads dir; a missing dir reads as an empty tree, so that a tool
// that wrote nothing shows up as "every file missing".
func readTree(t *testing.T, dir string) tree {
	t.Helper()
	out := tree{}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return out
	}
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
			out[rel] = dirMark
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
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
		t.Fatalf("read tree %s: %v", dir, err)
	}
	return out
}

// diffTrees describes how got differs from want, "" if they are equal.
func diffTrees(got, want tree) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			fmt.Fprintf(&b, "  missing: %s\n", k)
		case !wok:
			fmt.Fprintf(&b, "  extra:   %s\n", k)
		case g != w:
			fmt.Fprintf(&b, "  differs: %s (%d bytes, want %d)\n", k, len(g), len(w))
		}
	}
	return b.String()
}

// assertSameTree checks that the directory got holds exactly the tree of
// the directory want.
func assertSameTree(t *testing.T, got, want string) {
	t.Helper()
	assertTree(t, got, readTree(t, got), readTree(t, want), want)
}

func assertTree(t *testing.T, what string, got, want tree, wantWhat string) {
	t.Helper()
	if d := diffTrees(got, want); d != "" {
		t.Errorf("%s differs from %s:\n%s", what, wantWhat, d)
	}
}

// treeFromTar reads a tar stream and returns the entries under prefix
// (with the prefix removed), the way `tar -x PREFIX` would extract them.
func treeFromTar(t *testing.T, r io.Reader, prefix string) tree {
	t.Helper()
	out := tree{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(name, prefix), "/")
		if rel == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			out[rel] = dirMark
		case tar.TypeSymlink:
			out[rel] = "-> " + h.Linkname
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("read tar entry %s: %v", h.Name, err)
			}
			out[rel] = string(b)
		default:
			out[rel] = fmt.Sprintf("<type %c>", h.Typeflag)
		}
	}
	// Parent directories implied by file paths exist after extraction too.
	for k := range out {
		for d := k; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			if _, ok := out[d]; !ok {
				out[d] = dirMark
			}
		}
	}
	return out
}

// writeTar writes an uncompressed tar file of the given entries, in order;
// a name ending in "/" is a directory.
func writeTar(t *testing.T, path string, entries []tarEntry) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(1700000000, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, ModTime: mtime, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(e.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

type tarEntry struct{ name, content string }

// ---------------------------------------------------------------------------
// YAML

// yamlDocs decodes a YAML stream into its non-empty documents.
func yamlDocs(t *testing.T, b []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decode YAML stream: %v\n%s", err, b)
		}
		if v != nil {
			docs = append(docs, v)
		}
	}
	return docs
}

// ---------------------------------------------------------------------------
// addonpkg JSON outputs

// buildOutput is `addonpkg build --json`.
type buildOutput struct {
	Digest string          `json:"digest"`
	Tags   []string        `json:"tags"`
	Format string          `json:"format"`
	Config json.RawMessage `json:"config"`
}

// addonConfig is the part of the add-on config the tests look at.
type addonConfig struct {
	SpecVersion string `json:"specVersion"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	ContentRoot string `json:"contentRoot"`
	Identity    string `json:"identity"`
	Inventory   struct {
		Objects []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"objects"`
	} `json:"inventory"`
}

func (b buildOutput) config(t *testing.T) addonConfig {
	t.Helper()
	var c addonConfig
	if err := json.Unmarshal(b.Config, &c); err != nil {
		t.Fatalf("build --json config: %v\n%s", err, b.Config)
	}
	return c
}

// transferOutput is `addonpkg push|pull|copy --json`.
type transferOutput struct {
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
	MediaType string `json:"mediaType"`
}

// unpackOutput is `addonpkg unpack --json`.
type unpackOutput struct {
	Source   string      `json:"source"`
	Form     string      `json:"form"`
	Identity string      `json:"identity"`
	Digest   string      `json:"digest"`
	Config   addonConfig `json:"config"`
	Files    []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	} `json:"files"`
}

// inspectOutput is `addonpkg inspect --json`.
type inspectOutput struct {
	Source    string       `json:"source"`
	Digest    string       `json:"digest"`
	MediaType string       `json:"mediaType"`
	Form      string       `json:"form"`
	Config    *addonConfig `json:"config"`
	Layers    []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

// imagesRow is one entry of `addonpkg images --json`.
type imagesRow struct {
	Name      string `json:"name"`
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType"`
	Form      string `json:"form"`
}

// build builds dir with extra flags into the store and returns the --json
// output.
func (c *cli) build(dir string, flags ...string) buildOutput {
	c.t.Helper()
	var out buildOutput
	c.okJSON(&out, append([]string{"build", dir, "--json"}, flags...)...)
	if !strings.HasPrefix(out.Digest, "sha256:") {
		c.t.Fatalf("build %s: digest %q", dir, out.Digest)
	}
	return out
}

// corednsValues give examples/coredns the value it requires (its
// .addonvalues), for commands that render it.
var corednsValues = []string{"--set", "DNS_SERVER_IP=10.96.0.10"}

// filledCoreDNS is examples/coredns/coredns.yaml with corednsValues and
// its declared defaults filled in by hand.
func filledCoreDNS(src []byte) []byte {
	return []byte(strings.NewReplacer("${DNS_SERVER_IP}", "10.96.0.10", "${DNS_DOMAIN}", "cluster.local", "${DNS_MEMORY_LIMIT}", "170Mi").Replace(string(src)))
}
