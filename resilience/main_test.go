package resilience

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/testing/addonpkgbin"
)

// bin is the addonpkg binary under test (addonpkgbin.Path).
var bin string

// emptyDockerConfig keeps the user's docker credentials out of the tests.
var emptyDockerConfig string

func TestMain(m *testing.M) {
	flag.Parse()
	// The fault and crash tests mostly wait on child processes, backoff
	// timers and fsync, not on the CPU: run more of them at once than
	// GOMAXPROCS, unless the caller chose a -parallel.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "8")
	}
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resilience:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func buildAndRun(m *testing.M) (int, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return 0, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return 0, errors.New("not inside the addonpkg module")
	}
	tmp, err := os.MkdirTemp("", "addonpkg-resilience-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	if bin, err = addonpkgbin.Path(filepath.Dir(gomod), tmp); err != nil {
		return 0, err
	}
	emptyDockerConfig = filepath.Join(tmp, "docker")
	if err := os.Mkdir(emptyDockerConfig, 0o700); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// result is what one run of the binary did.
type result struct {
	args           []string
	code           int
	stdout, stderr string
	dur            time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("addonpkg %s: exit %d after %v\nstdout: %s\nstderr: %s",
		strings.Join(r.args, " "), r.code, r.dur.Round(time.Millisecond), r.stdout, r.stderr)
}

// command prepares a run of the binary with its own store and no docker
// credentials; the run is killed if it outlives ctx.
func command(ctx context.Context, home string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "ADDONPKG_HOME", "XDG_DATA_HOME", "DOCKER_CONFIG", "SOURCE_DATE_EPOCH":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "ADDONPKG_HOME="+home, "DOCKER_CONFIG="+emptyDockerConfig)
	return cmd
}

// cli runs the binary to the end (at most 2 minutes).
func cli(t testing.TB, home string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := command(ctx, home, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), dur: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		r.code = ee.ExitCode()
	default:
		t.Fatalf("addonpkg %s: %v (after %v)", strings.Join(args, " "), err, r.dur)
	}
	return r
}

// mustCLI runs the binary and fails the test unless it exits 0.
func mustCLI(t testing.TB, home string, args ...string) result {
	t.Helper()
	r := cli(t, home, args...)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	return r
}

// oneErrorLine checks the failure contract of the CLI: exit 1 and one
// line on stderr, "addonpkg: ...", that a person can read.
func oneErrorLine(r result) error {
	if r.code != 1 {
		return fmt.Errorf("exit %d, want 1", r.code)
	}
	var lines []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		return fmt.Errorf("%d stderr lines, want 1: %q", len(lines), r.stderr)
	}
	if !strings.HasPrefix(lines[0], "addonpkg: ") {
		return fmt.Errorf("stderr line does not start with \"addonpkg: \": %q", lines[0])
	}
	if strings.ContainsAny(lines[0], "\r\x1b") || len(lines[0]) > 2000 {
		return fmt.Errorf("stderr line is not a clear message: %q", lines[0])
	}
	return nil
}

// storeReport is what verifyStore found in a healthy store.
type storeReport struct {
	// Tags maps each org.opencontainers.image.ref.name to its digest.
	Tags map[string]v1.Hash
	// Entries is the number of descriptors in index.json.
	Entries int
	// Reachable holds the hex of every blob reached from index.json.
	Reachable map[string]bool
}

const refName = "org.opencontainers.image.ref.name"

// verifyStore checks a store (an OCI image layout) completely: oci-layout
// and index.json parse, no tag appears twice, and every descriptor of
// index.json and, recursively, every manifest, index, config and layer
// below it is present and hashes to its digest and size.
func verifyStore(dir string) (*storeReport, error) {
	b, err := os.ReadFile(filepath.Join(dir, "oci-layout"))
	if err != nil {
		return nil, err
	}
	var lay struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(b, &lay); err != nil || lay.Version == "" {
		return nil, fmt.Errorf("oci-layout %q: %v", b, err)
	}
	b, err = os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, err
	}
	var idx v1.IndexManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("index.json does not parse: %w: %q", err, b)
	}
	if dec.More() {
		return nil, fmt.Errorf("index.json has data after the document: %q", b)
	}
	if idx.SchemaVersion != 2 {
		return nil, fmt.Errorf("index.json schemaVersion %d", idx.SchemaVersion)
	}
	rep := &storeReport{Tags: map[string]v1.Hash{}, Entries: len(idx.Manifests), Reachable: map[string]bool{}}
	v := &verifier{dir: dir, seen: rep.Reachable}
	for _, d := range idx.Manifests {
		if n, ok := d.Annotations[refName]; ok {
			if n == "" {
				return nil, errors.New("index.json has an empty ref.name")
			}
			if _, dup := rep.Tags[n]; dup {
				return nil, fmt.Errorf("index.json names %q twice", n)
			}
			rep.Tags[n] = d.Digest
		}
		if err := v.desc(d, 0); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", d.Digest, d.Annotations[refName], err)
		}
	}
	return rep, nil
}

type verifier struct {
	dir  string
	seen map[string]bool
}

func (v *verifier) desc(d v1.Descriptor, depth int) error {
	if depth > 8 {
		return errors.New("nested too deep")
	}
	if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
		return fmt.Errorf("bad digest %q", d.Digest)
	}
	if v.seen[d.Digest.Hex] {
		return nil
	}
	p := filepath.Join(v.dir, "blobs", "sha256", d.Digest.Hex)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("blob missing: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	var doc bytes.Buffer
	isManifest := d.MediaType.IsImage() || d.MediaType.IsIndex() || d.MediaType == types.OCIManifestSchema1
	w := io.Writer(h)
	if isManifest {
		w = io.MultiWriter(h, &doc)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return err
	}
	if n != d.Size {
		return fmt.Errorf("blob is %d bytes, descriptor says %d", n, d.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.Digest.Hex {
		return fmt.Errorf("blob hashes to sha256:%s", got)
	}
	v.seen[d.Digest.Hex] = true
	switch {
	case d.MediaType.IsIndex():
		var im v1.IndexManifest
		if err := json.Unmarshal(doc.Bytes(), &im); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		for _, c := range im.Manifests {
			if err := v.desc(c, depth+1); err != nil {
				return fmt.Errorf("child %s: %w", c.Digest, err)
			}
		}
	case isManifest:
		var m v1.Manifest
		if err := json.Unmarshal(doc.Bytes(), &m); err != nil {
			return fmt.Errorf("manifest: %w", err)
		}
		if err := v.desc(m.Config, depth+1); err != nil {
			return fmt.Errorf("config %s: %w", m.Config.Digest, err)
		}
		for i, l := range m.Layers {
			if err := v.desc(l, depth+1); err != nil {
				return fmt.Errorf("layer %d %s: %w", i+1, l.Digest, err)
			}
		}
	}
	return nil
}

// tempFiles lists the temp files a writer leaves when it dies: .tmp-* in
// blobs/sha256 and in the store's root.
func tempFiles(dir string) []string {
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, "blobs", "sha256")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// unreferenced lists the blobs that nothing in index.json reaches.
func unreferenced(dir string, rep *storeReport) []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	for _, e := range entries {
		if !rep.Reachable[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

// dirEntries lists a directory's names, sorted; nil when it is missing.
func dirEntries(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// writeAddon writes an add-on tree: a ConfigMap naming it and a file of
// size pseudo-random (incompressible) bytes drawn from seed. It returns
// the files written, relative path to content.
func writeAddon(t testing.TB, dir, name string, seed uint64, size int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{
		"configmap.yaml": fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  seed: %q\n", name, fmt.Sprint(seed)),
	}
	if size > 0 {
		data := make([]byte, size)
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		for i := 0; i < len(data); i += 8 {
			x := r.Uint64()
			for j := 0; j < 8 && i+j < len(data); j++ {
				data[i+j] = byte(x >> (8 * j))
			}
		}
		files["payload/data.bin"] = data
	}
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// readTree reads every regular file under dir, keyed by slash path.
func readTree(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out, err
}

func sameTree(got, want map[string][]byte) error {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return fmt.Errorf("%s is missing", k)
		}
		if !bytes.Equal(g, w) {
			return fmt.Errorf("%s differs (%d bytes, want %d)", k, len(g), len(w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			return fmt.Errorf("unexpected file %s", k)
		}
	}
	return nil
}

// digestOut finds the sha256:... a command printed.
func digestOut(s string) string {
	i := strings.Index(s, "sha256:")
	if i < 0 || len(s) < i+71 {
		return ""
	}
	return s[i : i+71]
}
