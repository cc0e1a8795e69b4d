package e2e

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// setMarker starts each member's part of `addonpkg render` (spelled out,
// not imported, so that a change in pkg/addonset cannot silently change
// the test).
const setMarker = "# addonpkg-set-member: "

// setLock is the part of addons.lock the tests read.
type setLock struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Addons     []struct {
		Name     string `yaml:"name"`
		Entry    string `yaml:"entry"`
		Source   string `yaml:"source"`
		Tag      string `yaml:"tag"`
		Pinned   string `yaml:"pinned"`
		Digest   string `yaml:"digest"`
		Identity string `yaml:"identity"`
	} `yaml:"addons"`
}

func readSetLock(t *testing.T, file string) setLock {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var l setLock
	if err := yaml.Unmarshal(b, &l); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	return l
}

// setServer is one TLS server on 127.0.0.1 that serves git repositories
// under /git/ (git http-backend) and files under /files/, and the PEM file
// of its certificate for --ca-file.
type setServer struct {
	srv    *httptest.Server
	caFile string
	files  map[string][]byte
}

func newSetServer(t *testing.T, gitRoot, home string) *setServer {
	t.Helper()
	needTool(t, "git")
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		msg := "git-http-backend not found: " + installHint
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	s := &setServer{files: map[string][]byte{}}
	gitH := &cgi.Handler{Path: backend, Root: "/git", Env: []string{
		"GIT_PROJECT_ROOT=" + gitRoot, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
	}, Stderr: io.Discard}
	mux := http.NewServeMux()
	mux.Handle("/git/", gitH)
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		b, ok := s.files[strings.TrimPrefix(r.URL.Path, "/files/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	if err := os.WriteFile(s.caFile, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// gitRun runs git in dir with a fixed identity and date and no user config.
func gitRun(t *testing.T, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	date := "2024-01-02T03:04:05Z"
	cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"), "LC_ALL=C",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE="+date)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// members splits a rendered set at its member markers and returns the
// member names in order and each member's text.
func members(t *testing.T, stream string) ([]string, map[string]string) {
	t.Helper()
	var names []string
	parts := map[string]string{}
	cur := ""
	for _, line := range strings.SplitAfter(stream, "\n") {
		if n, ok := strings.CutPrefix(line, setMarker); ok {
			cur = strings.TrimSpace(n)
			names = append(names, cur)
			continue
		}
		if cur == "" && line != "" {
			t.Fatalf("the stream does not start with a member marker:\n%s", stream)
		}
		parts[cur] += line
	}
	return names, parts
}

// TestAddonSet runs lock and render on a set of four members, each from
// another kind of place, all served on 127.0.0.1: a registry add-on by
// semver range, a git repository's subdirectory at a tag (https), an
// https archive with its checksum, and a local folder.
func TestAddonSet(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	gitRoot := filepath.Join(tmp, "srv")
	work := filepath.Join(tmp, "work")
	for _, d := range []string{home, gitRoot, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := newSetServer(t, gitRoot, home)

	// Registry: cni 1.0.0 and 1.1.0, and a 2.0.0 outside the range.
	repo := r.Host + "/addons/cni"
	pushCNI := func(tag, value string) string {
		t.Helper()
		dir := writeTree(t, filepath.Join(t.TempDir(), "cni"), map[string]string{"cni.yaml": configMap("cni-" + value)})
		c.build(dir, "-t", "cni:"+tag)
		var out transferOutput
		c.okJSON(&out, "push", "cni:"+tag, repo+":"+tag, "--json", "-q")
		return out.Digest
	}
	pushCNI("1.0.0", "one-zero")
	locked := pushCNI("1.1.0", "one-one")
	pushCNI("2.0.0", "two")

	// Git: deploy/dns at tag v2; main moves on after it.
	writeTree(t, work, map[string]string{"deploy/dns/dns.yaml": configMap("dns-v2"), "README.md": "# add-ons\n"})
	gitRun(t, home, work, "init", "-q", "-b", "main")
	gitRun(t, home, work, "add", "-A")
	gitRun(t, home, work, "commit", "-q", "-m", "v2")
	gitRun(t, home, work, "tag", "-a", "v2", "-m", "version 2")
	tagCommit := gitRun(t, home, work, "rev-parse", "HEAD")
	writeTree(t, work, map[string]string{"deploy/dns/dns.yaml": configMap("dns-next")})
	gitRun(t, home, work, "commit", "-q", "-am", "next")
	gitRun(t, home, gitRoot, "clone", "-q", "--bare", work, "addons.git")

	// https: a tar archive of metrics, pinned by its checksum.
	archive := filepath.Join(tmp, "metrics.tar")
	writeTar(t, archive, []tarEntry{{"metrics/", ""}, {"metrics/metrics.yaml", configMap("metrics")}})
	body, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	srv.files["metrics.tar"] = body
	checksum := sha256Digest(body)

	// The set: local depends on nothing and is declared first, so it
	// renders first; dependsOn puts cni before dns before metrics.
	setDir := t.TempDir()
	writeTree(t, setDir, map[string]string{"local/local.yaml": configMap("local")})
	gitSrc := "git+" + srv.srv.URL + "/git/addons.git//deploy/dns?ref=v2"
	httpSrc := srv.srv.URL + "/files/metrics.tar//metrics?checksum=" + checksum
	decl := filepath.Join(setDir, "addons.yaml")
	writeTree(t, setDir, map[string]string{"addons.yaml": fmt.Sprintf(`apiVersion: addon.cncf.io/v1alpha1
kind: AddonSet
addons:
  - name: local
    source: ./local
  - name: metrics
    source: %q
    dependsOn: [dns]
  - name: dns
    source: %q
    dependsOn: [cni]
  - name: cni
    source: %s
    version: "~1.1"
`, httpSrc, gitSrc, repo)})
	lockFile := filepath.Join(setDir, "addons.lock")
	tls := []string{"--ca-file", srv.caFile}
	set := func(args ...string) []string { return append(append(args, "-f", decl), tls...) }

	c.ok(set("lock")...)
	l := readSetLock(t, lockFile)
	byName := map[string]int{}
	for i, m := range l.Addons {
		byName[m.Name] = i
	}
	if len(l.Addons) != 4 || l.Kind != "AddonSetLock" {
		t.Fatalf("lock: %+v", l)
	}
	for _, w := range []struct{ name, pinned, tag string }{
		{"cni", repo + "@" + locked, "1.1.0"},
		{"dns", "git+" + srv.srv.URL + "/git/addons.git//deploy/dns?ref=" + tagCommit, ""},
		{"metrics", httpSrc, ""},
		{"local", "./local", ""},
	} {
		m := l.Addons[byName[w.name]]
		if m.Pinned != w.pinned || m.Tag != w.tag || !strings.HasPrefix(m.Identity, "sha256:") || !strings.HasPrefix(m.Entry, "sha256:") {
			t.Errorf("lock of %s: pinned %q tag %q identity %q entry %q; want pinned %q tag %q", w.name, m.Pinned, m.Tag, m.Identity, m.Entry, w.pinned, w.tag)
		}
	}

	first := c.ok(set("render")...)
	if second := c.ok(set("render")...); second != first {
		t.Fatalf("two renders from the lock differ:\n%s\n---- and ----\n%s", first, second)
	}
	names, parts := members(t, first)
	if want := []string{"local", "cni", "dns", "metrics"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("members in the stream: %v, want %v", names, want)
	}
	for name, want := range map[string]string{"cni": "cni-one-one", "dns": "dns-v2", "metrics": "name: metrics", "local": "name: local"} {
		if !strings.Contains(parts[name], want) {
			t.Errorf("member %s renders\n%s\nwant it to contain %q", name, parts[name], want)
		}
	}
	if docs := yamlDocs(t, []byte(first)); len(docs) != 4 {
		t.Errorf("the stream holds %d objects, want 4", len(docs))
	}

	// -o DIR: one file per member, numbered in order.
	outDir := filepath.Join(t.TempDir(), "out")
	c.ok(set("render", "-o", outDir)...)
	got := readTree(t, outDir)
	for i, name := range []string{"local", "cni", "dns", "metrics"} {
		f := fmt.Sprintf("%02d-%s.yaml", i+1, name)
		if got[f] == "" || !strings.Contains(first, got[f]) {
			t.Errorf("render -o: %s is %q, not the member's part of the stream", f, got[f])
		}
	}

	// A new tag inside the range changes nothing until lock --update.
	newer := pushCNI("1.1.5", "one-one-five")
	if again := c.ok(set("render")...); again != first {
		t.Errorf("render changed after 1.1.5 was pushed, before lock --update:\n%s", again)
	}
	c.ok(set("lock")...)
	if l2 := readSetLock(t, lockFile); l2.Addons[byName["cni"]].Tag != "1.1.0" {
		t.Errorf("lock without --update moved cni to %s", l2.Addons[byName["cni"]].Tag)
	}
	c.ok(set("lock", "--check")...)
	c.ok(set("lock", "--update", "cni")...)
	l3 := readSetLock(t, lockFile)
	if m := l3.Addons[byName["cni"]]; m.Tag != "1.1.5" || m.Digest != newer {
		t.Errorf("lock --update cni: tag %q digest %q, want 1.1.5 %s", m.Tag, m.Digest, newer)
	}
	updated := c.ok(set("render")...)
	if _, p := members(t, updated); !strings.Contains(p["cni"], "cni-one-one-five") {
		t.Errorf("render after lock --update cni:\n%s", p["cni"])
	}
	for _, name := range []string{"dns", "metrics", "local"} {
		if l3.Addons[byName[name]] != l.Addons[byName[name]] {
			t.Errorf("lock --update cni changed %s", name)
		}
	}

	// A different add-on re-pushed under the locked tag: render refuses,
	// naming the member and both digests; lock --check exits 1.
	moved := pushCNI("1.1.5", "impostor")
	line := mustFailOneLine(t, c.run(set("render")...))
	for _, part := range []string{`"cni"`, newer, moved} {
		if !strings.Contains(line, part) {
			t.Errorf("render after the tag moved: %q does not name %s", line, part)
		}
	}
	// (The other members' fetches are cancelled: the line names the cause.)
	if line := mustFailOneLine(t, c.run(set("lock", "--check")...)); !strings.Contains(line, `member "cni"`) || !strings.Contains(line, moved) {
		t.Errorf("lock --check after the tag moved: %q does not name cni and %s", line, moved)
	}
	// --no-lock renders what the declaration resolves to now.
	if _, p := members(t, c.ok(set("render", "--no-lock")...)); !strings.Contains(p["cni"], "cni-impostor") {
		t.Errorf("render --no-lock:\n%s", p["cni"])
	}
}

// TestAddonSetErrors checks that a cycle and an unknown dependency each
// fail lock and render with one line and exit code 1.
func TestAddonSetErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, tc := range []struct{ name, addons, want string }{
		{"cycle", "  - name: a\n    source: ./x\n    dependsOn: [b]\n  - name: b\n    source: ./x\n    dependsOn: [a]\n", "dependency cycle: a -> b -> a"},
		{"unknown dependency", "  - name: a\n    source: ./x\n    dependsOn: [nope]\n", `member "a": unknown dependency "nope"`},
		{"duplicate name", "  - name: a\n    source: ./x\n  - name: a\n    source: ./x\n", `member "a": duplicate name`},
		{"unknown field", "  - name: a\n    source: ./x\n    dependOn: [b]\n", `unknown field "dependOn"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, t.TempDir(), map[string]string{
				"x/x.yaml":    configMap("x"),
				"addons.yaml": "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n" + tc.addons,
			})
			decl := filepath.Join(dir, "addons.yaml")
			for _, verb := range []string{"lock", "render"} {
				line := mustFailOneLine(t, c.on(t).run(verb, "-f", decl))
				if !strings.Contains(line, tc.want) || !strings.Contains(line, "addons.yaml") {
					t.Errorf("%s: %q does not name the file and %q", verb, line, tc.want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "addons.lock")); err == nil {
				t.Error("a failed lock wrote addons.lock")
			}
		})
	}
}

// TestAddonSetMirror mirrors a set (a registry member by range and a
// folder) to another repository prefix and to an oci-archive, then renders
// each mirrored set from its declaration and lock: the same stream as the
// original set, with the same identities.
func TestAddonSetMirror(t *testing.T) {
	t.Parallel()
	r := startRegistry(t, testregistry.Plain)
	c := newCLI(t)
	dir := writeTree(t, filepath.Join(t.TempDir(), "cni"), map[string]string{"cni.yaml": configMap("cni")})
	c.build(dir, "-t", "cni:1.2.0")
	c.ok("push", "-q", "cni:1.2.0", r.Host+"/upstream/cni:1.2.0")
	setDir := writeTree(t, t.TempDir(), map[string]string{
		"local/local.yaml": configMap("local"),
		"addons.yaml": "apiVersion: addon.cncf.io/v1alpha1\nkind: AddonSet\naddons:\n" +
			"  - name: local\n    source: ./local\n    dependsOn: [cni]\n" +
			"  - name: cni\n    source: " + r.Host + "/upstream/cni\n    version: ^1\n",
	})
	decl := filepath.Join(setDir, "addons.yaml")
	c.ok("lock", "-f", decl)
	want := c.ok("render", "-f", decl)
	orig := readSetLock(t, filepath.Join(setDir, "addons.lock"))

	for _, to := range []string{r.Host + "/mirror", "oci-archive:" + filepath.Join(t.TempDir(), "set.tar")} {
		out := filepath.Join(t.TempDir(), "mirrored.yaml")
		pinned := c.ok("mirror", "-f", decl, "--to", to, "-o", out)
		if n := strings.Count(pinned, "\n"); n != 2 {
			t.Errorf("mirror --to %s printed %d lines, want the 2 pinned sources:\n%s", to, n, pinned)
		}
		ml := readSetLock(t, filepath.Join(filepath.Dir(out), "mirrored.lock"))
		for i, m := range ml.Addons {
			if m.Identity != orig.Addons[i].Identity || m.Name != orig.Addons[i].Name {
				t.Errorf("mirror --to %s: %s has identity %s, the original %s", to, m.Name, m.Identity, orig.Addons[i].Identity)
			}
			if strings.Contains(m.Pinned, "/upstream/") || strings.Contains(m.Pinned, setDir) {
				t.Errorf("mirror --to %s: %s is pinned to %s, not the mirror", to, m.Name, m.Pinned)
			}
		}
		if got := c.ok("render", "-f", out); got != want {
			t.Errorf("the set mirrored to %s renders\n%s\nwant\n%s", to, got, want)
		}
		c.ok("lock", "--check", "-f", out)
	}
	line := mustFailOneLine(t, c.run("mirror", "-f", decl, "--to", "mirror"))
	if !strings.Contains(line, "REGISTRY/PREFIX") {
		t.Errorf("mirror --to without a registry host: %q", line)
	}
}
